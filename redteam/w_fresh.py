"""R4: freshness and isolation of the vector copies across two replicas (8091, 8092).

Each round: ingest a document of ten random words on one replica; search on the other at once
(a) with the words misspelt (no query term is indexed: the hits are the vector ranking alone) and
(b) scoped with document_ids = [it] + unknown ids + duplicates; then delete it on the first replica
and search on the second again (exact text) for it. Meanwhile a writer thread ingests and deletes
other documents of the same tenant (both replicas), and tenant B searches scoped to tenant A's ids.
Counts every miss (found nothing after the ingest returned), every stale hit (found after the delete
returned) and every hit of another tenant. ROUNDS (default 200).
"""
import os, random, threading, time, uuid
import w_rt as rt
from w_rt import VOCAB, misspelt

ROUNDS = int(os.environ.get("ROUNDS", "200"))
A, B = rt.PORTS[0], rt.PORTS[1]
ka, kb = rt.tenant("freshA"), rt.tenant("freshB")
rnd = random.Random(int(os.environ.get("SEED", "7")))
# a corpus for tenant A and B so copies exist and exceed the beam
for k, tag in ((ka, "a"), (kb, "b")):
    f = os.path.join(rt.VAR, "fresh-seeded-" + tag)
    if not os.path.exists(f):
        for i in range(60):
            st, d, _ = rt.ingest(A, k, "\n\n".join(" ".join(rnd.sample(VOCAB, 12)) + "." for _ in range(8)), uri="seed/%s/%d.txt" % (tag, i))
            assert st in (200, 201), (st, d)
        open(f, "w").write("1")
b_docs = [d["id"] for d in rt.req(A, "GET", "/v1/documents", key=kb)[1]["documents"]]
a_docs = [d["id"] for d in rt.req(A, "GET", "/v1/documents", key=ka)[1]["documents"]]
stop = threading.Event()
stats = {"writes": 0, "b_leaks": 0, "b_searches": 0, "errors": []}

def writer():
    r = random.Random(1)
    while not stop.is_set():
        p = r.choice(rt.PORTS)
        st, d, _ = rt.ingest(p, ka, " ".join(r.sample(VOCAB, 12)) + ".", uri="churn/%s.txt" % uuid.uuid4())
        if st != 201: stats["errors"].append(("ingest", st)); continue
        time.sleep(0.2)
        st, _, _ = rt.delete(r.choice(rt.PORTS), ka, d["id"])
        if st not in (200, 204): stats["errors"].append(("delete", st))
        stats["writes"] += 2

def other_tenant():
    r = random.Random(2)
    while not stop.is_set():
        scope = r.sample(a_docs, 5) + [str(uuid.uuid4()) for _ in range(3)]
        st, d, _ = rt.search(r.choice(rt.PORTS), kb, " ".join(r.sample(VOCAB, 5)), limit=20, document_ids=scope)
        stats["b_searches"] += 1
        if st != 200: stats["errors"].append(("b-search", st, str(d)[:200])); continue
        stats["b_leaks"] += len(d["results"])
        time.sleep(0.05)

threads = [threading.Thread(target=writer), threading.Thread(target=other_tenant)]
for t in threads: t.start()
before = {p: rt.ranked(p) for p in rt.PORTS}
miss_vec = miss_scoped = stale = foreign = 0
t0 = time.time()
try:
    for i in range(ROUNDS):
        x, y = (A, B) if i % 2 == 0 else (B, A)
        s = " ".join(rnd.sample(VOCAB, 10)) + "."
        st, d, _ = rt.ingest(x, ka, s, uri="probe/%d-%s.txt" % (i, uuid.uuid4()))
        assert st in (200, 201), (st, d)
        doc = d["id"]
        st, r1, _ = rt.search(y, ka, misspelt(s), limit=10)
        assert st == 200, (st, r1)
        if not any(h["document_id"] == doc for h in r1["results"]): miss_vec += 1
        scope = [doc, doc, doc] + [str(uuid.uuid4()) for _ in range(500)] + rnd.sample(b_docs, 20)
        st, r2, _ = rt.search(y, ka, misspelt(s), limit=10, document_ids=scope)
        assert st == 200, (st, r2)
        if not any(h["document_id"] == doc for h in r2["results"]): miss_scoped += 1
        foreign += sum(1 for h in r1["results"] + r2["results"] if h["document_id"] in b_docs)
        st, _, _ = rt.delete(x, ka, doc)
        assert st in (200, 204), st
        st, r3, _ = rt.search(y, ka, s, limit=10)
        assert st == 200, (st, r3)
        if any(h["document_id"] == doc for h in r3["results"]): stale += 1
finally:
    stop.set()
    for t in threads: t.join()
after = {p: rt.ranked(p) for p in rt.PORTS}
print("%d rounds in %.0f s; background writes %d; tenant B scoped searches %d" % (ROUNDS, time.time() - t0, stats["writes"], stats["b_searches"]))
print("missed after ingest (vector-only query): %d; missed, scoped: %d; found after delete: %d; other tenant's hits: %d; B's hits on A's ids: %d; errors: %s"
      % (miss_vec, miss_scoped, stale, foreign, stats["b_leaks"], stats["errors"][:5]))
for p in rt.PORTS:
    print(p, {k: after[p][k] - before[p].get(k, 0) for k in after[p] if "rankings" in k})
