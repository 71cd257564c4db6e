"""F3b: every blocking job of the gateway shares Vert.x's one worker pool (20 threads): ingest's
conversion and embedding, a search's query embedding, sandbox launches, /readyz's docker check.
A tenant that holds the 20 threads (here WORKERS requests of the F3 title/uri pair, each a few seconds
of CPU; with a bigger N each holds its thread for hours) makes every other tenant's search and the
readiness probe wait. Bounded: N=250000, ~30 s."""
import json, os, threading, time
from rt import *

workers, n = int(os.environ.get("WORKERS", "22")), int(os.environ.get("N", "250000"))
res = []
def attack(i):
    r = ingest_json("starve %d" % i, uri="a" * (n // 2 - 2) + "b%d" % i, title="a" * n, timeout=300)
    res.append(r[0])
# baseline for the victim, a fresh query each time so the query-vector cache does not answer
q = lambda tag: {"query": "lighthouse keeper %s %f" % (tag, time.time()), "limit": 3}
show("victim search before", req("POST", "/v1/search", q("before"), k=key(2)), 60)
ts = [threading.Thread(target=attack, args=(i,)) for i in range(workers)]
t0 = time.time()
for t in ts: t.start()
time.sleep(1.5)
c = http.client.HTTPConnection(HOST, PORT, timeout=300)
t1 = time.time(); c.request("GET", "/readyz"); rr = c.getresponse(); rr.read()
print("readyz during attack: %d after %.2fs" % (rr.status, time.time() - t1))
show("victim search during", req("POST", "/v1/search", q("during"), k=key(2)), 60)
for t in ts: t.join(timeout=300)
print("attack requests: %s, all done after %.1fs" % (sorted(res), time.time() - t0))
show("victim search after", req("POST", "/v1/search", q("after"), k=key(2)), 60)
