"""Concurrency: many uploads of one uri with different bytes at once, deletes of that document while
they run, searches meanwhile; then checks that what is stored is consistent (one document for the
uri, its item_count/chunk_count match /items and its chunks). ROUNDS x WORKERS requests, bounded."""
import json, os, threading, time, collections
from rt import *

rounds, workers = int(os.environ.get("ROUNDS", "3")), int(os.environ.get("WORKERS", "12"))
stats = collections.Counter()
bad = []
ids = set()
lock = threading.Lock()

def rec(kind, r):
    with lock:
        stats["%s %d" % (kind, r[0])] += 1
        if r[0] >= 500:
            bad.append((kind, r[0], r[1][:300]))

def up(rnd, i):
    body = ("round %d writer %d\n\n" % (rnd, i) + "\n\n".join("paragraph %d of writer %d about lighthouses" % (j, i) for j in range(60))).encode()
    r = upload("same.txt", body, uri="same-uri.txt", ctype="text/plain")
    rec("upload", r)
    if r[0] < 300:
        with lock: ids.add(json.loads(r[1])["id"])

def deleter():
    for _ in range(20):
        for d in list(ids):
            rec("delete", req("DELETE", "/v1/documents/" + d))
        time.sleep(0.05)

def searcher():
    for _ in range(20):
        rec("search", req("POST", "/v1/search", {"query": "lighthouses writer", "limit": 20}))
        time.sleep(0.05)

t0 = time.time()
for rnd in range(rounds):
    ts = [threading.Thread(target=up, args=(rnd, i)) for i in range(workers)]
    ts += ([] if os.environ.get("NODELETE") else [threading.Thread(target=deleter)]) + [threading.Thread(target=searcher)]
    for t in ts: t.start()
    for t in ts: t.join(timeout=300)
print("elapsed %.1fs" % (time.time() - t0))
for k, v in sorted(stats.items()): print("  %-14s %d" % (k, v))
for b in bad[:10]: print("  5xx:", b)
# consistency
docs = json.loads(req("GET", "/v1/documents")[1])["documents"]
same = [d for d in docs if d["uri"] == "same-uri.txt"]
print("documents with uri same-uri.txt:", len(same))
for d in same:
    items = req("GET", "/v1/documents/%s/items" % d["id"])[1].decode().splitlines()
    print("  %s v%d item_count=%d /items=%d" % (d["id"], d["version"], d["item_count"], len(items)))
