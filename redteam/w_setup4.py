"""R4-4 reproduction setup: tenants freshB (~500 chunks via API), mem0..mem7 and storm (1 doc + bulk SQL).
    MEM_CHUNKS=6000 STORM_CHUNKS=20000 python3 w_setup4.py
"""
import os, random, sys, time
import w_rt as rt
import w_bulk
from w_rt import VOCAB
P = rt.PORTS[0]
MEM = int(os.environ.get("MEM_CHUNKS", "6000")); STORM = int(os.environ.get("STORM_CHUNKS", "20000"))
what = sys.argv[1:] or ["freshB", "mem", "storm"]
rnd = random.Random(7)
def marker(name): return os.path.join(rt.VAR, "setup-" + name)
def seed(name):
    k = rt.tenant(name)
    st, d, _ = rt.ingest(P, k, " ".join(rnd.sample(VOCAB, 12)) + ".", uri="seed/%s.txt" % name)
    assert st in (200, 201), (st, d)
    return k
if "freshB" in what and not os.path.exists(marker("freshB")):
    k = rt.tenant("freshB"); t0 = time.time()
    for i in range(60):
        st, d, _ = rt.ingest(P, k, "\n\n".join(" ".join(rnd.sample(VOCAB, 12)) + "." for _ in range(8)), uri="seed/b/%d.txt" % i)
        assert st in (200, 201), (st, d)
    open(marker("freshB"), "w").write("1"); print("freshB %.0f s" % (time.time() - t0), flush=True)
names = (["mem%d" % i for i in range(8)] if "mem" in what else []) + (["storm"] if "storm" in what else [])
for n in names:
    if os.path.exists(marker(n)): continue
    t0 = time.time(); seed(n); w_bulk.bulk(n, STORM if n == "storm" else MEM)
    open(marker(n), "w").write("1"); print("%s %.0f s" % (n, time.time() - t0), flush=True)
