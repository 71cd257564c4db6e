"""R4-2: a vector copy between a quarter and a third of the budget is never rebuilt after a write.

Start PORT with a budget where tenant mem0's vector copy (6,001 chunks: ~9.9 MB, build peak 3x)
is over a quarter of it: `w_serve.sh 8091 32 512m`. Searches mem0 until its vectors rank in memory,
ingests one document into mem0 (its version moves), then searches once a second for WAIT s and
counts where its vectors were ranked, and whether a new vector copy was built.
"""
import os, re, time
import w_rt as rt

PORT = int(os.environ.get("PORT", "8091"))
WAIT = int(os.environ.get("WAIT", "90"))
k = rt.tenant("mem0")
M, D = 'quarry_search_vector_rankings_total{source="memory"}', 'quarry_search_vector_rankings_total{source="database"}'
def count():
    m = rt.ranked(PORT); return m.get(M, 0), m.get(D, 0), m.get("quarry_search_term_index_bytes", 0)
t0 = time.time()
while count()[0] == 0 and time.time() - t0 < 180:
    rt.search(PORT, k, "ledger copper turbine", limit=5); time.sleep(1)
m0, d0, g0 = count()
print("ranked in memory after %.0f s; gauge %.1f MB" % (time.time() - t0, g0 / 2**20))
logf = os.path.join(rt.VAR, "%d.log" % PORT); log0 = os.path.getsize(logf)
st, d, _ = rt.ingest(PORT, k, "A new note about walrus ledgers, written %f." % time.time(), uri="mem/new-%d.txt" % time.time_ns())
print("ingest", st)
m1, d1, _ = count()
for i in range(WAIT):
    rt.search(PORT, k, "ledger copper turbine", limit=5); time.sleep(1)
m2, d2, g2 = count()
with open(logf, errors="replace") as f:
    f.seek(log0); text = f.read()
print("after the write, %d s: vector rankings in memory %d, in the database %d; vector copies built %d; gauge %.1f MB"
      % (WAIT, m2 - m1, d2 - d1, len(re.findall("search data built: vectors", text)), g2 / 2**20))
