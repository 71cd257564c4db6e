"""R4: the same searches on a replica ranking vectors in memory (MEM_PORT 8091) and on one ranking
in the database (DB_PORT 8092 started with QUARRY_SEARCH_MEMORY_MB=0): hits and fused scores.
Queries: misspelt (vector only) and plain (hybrid), for TENANTS. Prints how many result lists
differ in ids/order, and the largest score difference among hits both return."""
import os, random
import w_rt as rt
from w_rt import VOCAB, misspelt

MEM, DB = int(os.environ.get("MEM_PORT", "8091")), int(os.environ.get("DB_PORT", "8092"))
TENANTS = os.environ.get("TENANTS", "freshA,freshB,dups,mem0").split(",")
r = random.Random(11)
import uuid
def doc_ids(key):
    return [d["id"] for d in rt.req(MEM, "GET", "/v1/documents", key=key)[1]["documents"]]
others = doc_ids(rt.tenant("freshA"))
for name in TENANTS:
    k = rt.tenant(name)
    for _ in range(20): rt.search(MEM, k, "warm " + str(r.random()))
    before = rt.ranked(MEM)
    differ = same = 0; worst = 0.0; n = 0; outside = 0
    mine = doc_ids(k)
    for i in range(60):
        q = " ".join(r.sample(VOCAB, 5))
        if i % 2: q = misspelt(q)
        scope = None
        if i >= 40:  # scoped: some of its own documents, each twice, unknown ids, another tenant's
            own = r.sample(mine, min(3, len(mine)))
            scope = own + own + [str(uuid.uuid4()) for _ in range(200)] + r.sample(others, 20)
        a = rt.search(MEM, k, q, limit=10, document_ids=scope)[1]["results"]; b = rt.search(DB, k, q, limit=10, document_ids=scope)[1]["results"]
        if scope: outside += sum(1 for h in a if h["document_id"] not in own)
        n += 1
        if [h["chunk_id"] for h in a] != [h["chunk_id"] for h in b]: differ += 1
        sb = {h["chunk_id"]: h["score"] for h in b}
        for h in a:
            if h["chunk_id"] in sb: worst = max(worst, abs(h["score"] - sb[h["chunk_id"]]))
    after = rt.ranked(MEM)
    mem = after.get('quarry_search_vector_rankings_total{source="memory"}', 0) - before.get('quarry_search_vector_rankings_total{source="memory"}', 0)
    print("%-7s %d queries (20 scoped): %d result lists differ; max |score diff| on common hits %.2e; hits outside the scope %d; memory vector rankings %d" % (name, n, differ, worst, outside, mem))
