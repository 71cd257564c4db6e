"""R4: many tenants' first searches at once (a restarted replica): their copies all want building.

Restart PORT first (w_serve.sh). Victim freshB is warmed alone (its copies built), measured BASE s,
then COLD tenants (mem0.., storm) each search without pause from one thread each for WAVE s while
the victim keeps measuring. Prints the victim's p50/p99 per phase, the cold tenants' first-search
times and search p50/p99, and the builds the log shows during the wave.
"""
import os, random, re, threading, time
import w_rt as rt
from w_rt import VOCAB

PORT = int(os.environ.get("PORT", "8091"))
BASE = int(os.environ.get("BASE", "30"))
WAVE = int(os.environ.get("WAVE", "90"))
COLD = os.environ.get("COLD", "mem0,mem1,mem2,mem3,mem4,mem5,mem6,mem7,storm").split(",")
kv = rt.tenant("freshB")
queries = [" ".join(random.Random(i).sample(VOCAB, 4)) for i in range(10)]
logf = os.path.join(rt.VAR, "%d.log" % PORT)

def victim(seconds):
    return [ms for _, ms in rt.searches(PORT, kv, queries, seconds)]

summary = rt.summary

for _ in range(20):
    victim(0.01); time.sleep(0.3)
summary("base", victim(BASE))
log0 = os.path.getsize(logf)
stop = threading.Event(); first = {}; lat = []; errs = []
def cold(name):
    k = rt.tenant(name); i = 0
    while not stop.is_set():
        st, d, dt = rt.search(PORT, k, queries[i % 10], limit=10, timeout=120)
        if st != 200: errs.append(st)
        first.setdefault(name, dt * 1000); lat.append(dt * 1000); i += 1
threads = [threading.Thread(target=cold, args=(n,)) for n in COLD]
for t in threads: t.start()
try:
    summary("wave", victim(WAVE))
finally:
    stop.set()
    for t in threads: t.join()
with open(logf, errors="replace") as f:
    f.seek(log0); text = f.read()
builds = re.findall(r'search data built: (vectors|BM25 postings) at version \d+: (\d+) chunks[^"]*?, (\d+) bytes, (\d+) ms', text)
print("cold tenants: first searches %s ms; all their searches %d, p50 %.0f ms p99 %.0f ms; errors %s"
      % (sorted(int(v) for v in first.values()), len(lat), rt.pct(lat, 50), rt.pct(lat, 99), errs[:5]))
print("builds during the wave: vectors %s; BM25 %d" % ([(int(c), int(ms)) for k, c, b, ms in builds if k == "vectors"], sum(1 for b in builds if b[0] != "vectors")))
