"""R4 finding: identical chunks (boilerplate repeated across documents) break the in-memory HNSW copy.

A tenant holds DUPS documents of one identical boilerplate paragraph (so DUPS identical vectors) and
DISTINCT documents of distinct sentences. Each distinct sentence is then searched with its exact text,
on a replica whose vectors are ranked in memory (MEM_PORT, default 8091) and on one ranked by the
database (DB_PORT, default 8092, started with `w_serve.sh 8092 0`). Counted: searches whose results lack the document.
The query is the sentence with every word misspelled (its last letter doubled): no query term is in
the tenant's postings, so full text ranks nothing and the hits are the vector ranking alone (the
embedding of the misspelled sentence stays near the sentence's).
"""
import os, random, sys, time
import w_rt as rt

DUPS = int(os.environ.get("DUPS", "400"))
DISTINCT = int(os.environ.get("DISTINCT", "100"))
MEM = int(os.environ.get("MEM_PORT", "8091"))
DB = int(os.environ.get("DB_PORT", "8092"))
key = rt.tenant(os.environ.get("TENANT", "dups"))
words = open("/usr/share/dict/words").read().split() if os.path.exists("/usr/share/dict/words") else None
rnd = random.Random(4)
BOILER = ("This page is intentionally left blank. Confidential and proprietary; do not distribute "
          "without the prior written consent of the company.")
docs = []
if not os.path.exists(rt.VAR + "/dups-seeded-" + str(DUPS)):
    for i in range(DUPS):
        st, d, _ = rt.ingest(MEM, key, BOILER, uri="boiler/%d.txt" % i)
        assert st in (200, 201), (st, d)
    open(rt.VAR + "/dups-seeded-" + str(DUPS), "w").write("1")
from w_rt import VOCAB, misspelt
sentences = []
for i in range(DISTINCT):
    f = os.path.join(rt.VAR, "dups-distinct-%d" % i)
    if os.path.exists(f):
        doc, s = open(f).read().split("\t", 1)
    else:
        s = " ".join(rnd.sample(VOCAB, 10)) + "."
        st, d, _ = rt.ingest(MEM, key, s, uri="distinct/%d.txt" % i)
        assert st in (200, 201), (st, d)
        doc = d["id"] if "id" in d else d["document"]["id"]
        open(f, "w").write(doc + "\t" + s)
    sentences.append((doc, s))
print("tenant: %d identical boilerplate documents, %d distinct ones" % (DUPS, DISTINCT))
for port in (MEM, DB):
    for _ in range(30):  # until the memory replica ranks from its copies
        rt.search(port, key, "warm up " + str(time.time()))
        time.sleep(0.5)
    before = rt.ranked(port)
    missing = 0
    for doc, s in sentences:
        st, d, _ = rt.search(port, key, misspelt(s), limit=10)
        assert st == 200, (st, d)
        if not any(h["document_id"] == doc for h in d["results"]):
            missing += 1
    after = rt.ranked(port)
    delta = {k: after[k] - before.get(k, 0) for k in after if "rankings" in k and after[k] != before.get(k, 0)}
    print("port %d: %d/%d distinct documents missing from their own (misspelt, vector-only) search; rankings %s" % (port, missing, DISTINCT, delta))
