"""R4: a tenant that writes all the time forces rebuilds of its copies; another tenant's search latency.

PORT (default 8092, default budget). Victim: tenant freshB (w_fresh.py's, ~500 chunks), one client,
ten queries in turn (their vectors cached after the first round, so the time is search's own).
Storm: tenant `storm` (w_bulk.py, STORM_CHUNKS chunks) ingests a one-line document every
WRITE_EVERY s (each moves its version) and searches all the time (each search asks for a rebuild).
Phases: BASE s quiet, then STORM s of storm. Prints the victim's p50/p99/max per phase and the
storm tenant's builds (from the log: kind, chunks, ms).
"""
import os, random, re, threading, time, uuid
import w_rt as rt
from w_rt import VOCAB

PORT = int(os.environ.get("PORT", "8092"))
BASE = int(os.environ.get("BASE", "60"))
STORM = int(os.environ.get("STORM", "90"))
WRITE_EVERY = float(os.environ.get("WRITE_EVERY", "0.5"))
SEARCHERS = int(os.environ.get("SEARCHERS", "1"))
kv, ks = rt.tenant("freshB"), rt.tenant("storm")
queries = [" ".join(random.Random(i).sample(VOCAB, 4)) for i in range(10)]
logf = os.path.join(rt.VAR, "%d.log" % PORT)

def victim(seconds):
    return [ms for _, ms in rt.searches(PORT, kv, queries, seconds)]

summary = rt.summary

for _ in range(20):
    victim(0.01); time.sleep(0.3)
summary("base", victim(BASE))
log0 = os.path.getsize(logf)
stop = threading.Event(); writes = [0]; storm_lat = []
def writer():
    while not stop.is_set():
        st, d, _ = rt.ingest(PORT, ks, "storm note " + " ".join(random.sample(VOCAB, 6)), uri="storm/%s.txt" % uuid.uuid4())
        writes[0] += 1
        time.sleep(WRITE_EVERY)
def searcher():
    while not stop.is_set():
        st, d, dt = rt.search(PORT, ks, random.choice(queries), limit=10, timeout=120)
        storm_lat.append(dt * 1000)
threads = [threading.Thread(target=writer)] + [threading.Thread(target=searcher) for _ in range(SEARCHERS)]
for t in threads: t.start()
try:
    summary("storm", victim(STORM))
finally:
    stop.set()
    for t in threads: t.join()
with open(logf, errors="replace") as f:
    f.seek(log0); text = f.read()
builds = re.findall(r'search data built: (vectors|BM25 postings) at version \d+: (\d+) chunks[^"]*?, (\d+) bytes, (\d+) ms', text)
vec = [(int(c), int(ms)) for k, c, b, ms in builds if k == "vectors"]
print("storm: %d writes, %d storm searches (p50 %.0f ms); builds during storm: %d vector %s, %d BM25"
      % (writes[0], len(storm_lat), rt.pct(storm_lat, 50), len(vec), vec[:12], len(builds) - len(vec)))
