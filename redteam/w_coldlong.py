"""R4-4 variant of w_coldstart.py: a long wave (WAVE s) reported in windows of WIN s: victim p50/p99,
cold tenants' p50, and when each vector copy was built (s since the wave began, from the log)."""
import json, os, random, re, threading, time
import w_rt as rt
from w_rt import VOCAB
PORT = int(os.environ.get("PORT", "8091")); BASE = int(os.environ.get("BASE", "30"))
WAVE = int(os.environ.get("WAVE", "300")); WIN = int(os.environ.get("WIN", "30"))
COLD = os.environ.get("COLD", "mem0,mem1,mem2,mem3,mem4,mem5,mem6,mem7,storm").split(",")
kv = rt.tenant("freshB")
queries = [" ".join(random.Random(i).sample(VOCAB, 4)) for i in range(10)]
logf = os.path.join(rt.VAR, "%d.log" % PORT)
def victim(seconds, out):
    return rt.searches(PORT, kv, queries, seconds, out)
for _ in range(20):
    victim(0.01, []); time.sleep(0.3)
b = [x for _, x in victim(BASE, [])]
print("base victim %d p50 %.1f p99 %.1f" % (len(b), rt.pct(b, 50), rt.pct(b, 99)), flush=True)
log0 = os.path.getsize(logf)
stop = threading.Event(); lat = []; errs = []
def cold(name):
    k = rt.tenant(name); i = 0
    while not stop.is_set():
        st, d, dt = rt.search(PORT, k, queries[i % 10], limit=10, timeout=120)
        if st != 200: errs.append(st)
        lat.append((time.time(), dt * 1000)); i += 1
t0 = time.time()
threads = [threading.Thread(target=cold, args=(n,)) for n in COLD]
for t in threads: t.start()
v = []
try:
    victim(WAVE, v)
finally:
    stop.set()
    for t in threads: t.join()
for w in range(0, WAVE, WIN):
    vv = [x for t, x in v if t0 + w <= t < t0 + w + WIN]; cc = [x for t, x in lat if t0 + w <= t < t0 + w + WIN]
    print("%3d-%3d s victim %5d p50 %6.1f p99 %6.1f | cold %5d p50 %6.1f" % (w, w + WIN, len(vv), rt.pct(vv, 50), rt.pct(vv, 99), len(cc), rt.pct(cc, 50)))
with open(logf, errors="replace") as f:
    f.seek(log0); lines = f.readlines()
vb = []
for ln in lines:
    m = re.search(r'search data built: vectors at version \d+: (\d+) chunks[^"]*?, (\d+) ms', ln)
    if m:
        ts = json.loads(ln)["timestamp"] / 1000.0
        vb.append("%d@%.0fs(%ds)" % (int(m.group(1)), ts - t0, int(m.group(2)) // 1000))
print("vector copies built (chunks@end since wave start(build s)): %s; errors %s" % (vb, errs[:5]))
