"""R4: copies' heap against QUARRY_SEARCH_MEMORY_MB under eviction churn.

Run the gateway small: `w_serve.sh 8091 64 320m`. TENANTS tenants (mem0..), each of CHUNKS chunks
(made by w_bulk.py: vector copy ~CHUNKS x 1.6 KB, its build's peak 3x that), searched round-robin by
CLIENTS threads for SECONDS: their copies do not all fit, so searches evict and rebuild without end.
Every PERIOD s: the gauge quarry_search_term_index_bytes (what the copies reserve) and the live heap
(jcmd GC.class_histogram total: a full GC, then what is reachable). Then the log's OOMs and builds.
"""
import os, random, re, subprocess, threading, time
import w_rt as rt
from w_rt import VOCAB

PORT = int(os.environ.get("PORT", "8091"))
TENANTS = int(os.environ.get("TENANTS", "8"))
CLIENTS = int(os.environ.get("CLIENTS", "4"))
SECONDS = int(os.environ.get("SECONDS", "120"))
PERIOD = int(os.environ.get("PERIOD", "10"))
pid = open(os.path.join(rt.VAR, "%d.pid" % PORT)).read().strip()
jcmd = os.path.join(subprocess.check_output([os.path.join(rt.HERE, "..", "scripts", "setup.sh"), "--print-java-home"]).decode().strip(), "bin", "jcmd")
keys = [rt.tenant("mem%d" % i) for i in range(TENANTS)]
queries = [" ".join(random.Random(i).sample(VOCAB, 4)) for i in range(10)]
stop = threading.Event()
lat, statuses = [], {}

def client(n):
    r = random.Random(n)
    i = n
    while not stop.is_set():
        i += 1
        st, d, dt = rt.search(PORT, keys[i % TENANTS], r.choice(queries), limit=10, timeout=120)
        statuses[st] = statuses.get(st, 0) + 1
        lat.append(dt)

def live():
    out = subprocess.run([jcmd, pid, "GC.class_histogram"], capture_output=True, text=True).stdout
    m = re.search(r"^Total\s+\d+\s+(\d+)", out, re.M)
    return int(m.group(1)) if m else -1

log0 = os.path.getsize(os.path.join(rt.VAR, "%d.log" % PORT))
threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
for t in threads: t.start()
t0 = time.time(); peak_gauge = peak_live = 0
try:
    while time.time() - t0 < SECONDS:
        time.sleep(PERIOD)
        g = rt.metrics(PORT).get("quarry_search_term_index_bytes", -1)
        l = live()
        peak_gauge, peak_live = max(peak_gauge, g), max(peak_live, l)
        print("t=%3.0fs gauge %6.1f MB  live heap %6.1f MB  searches %d %s" % (time.time() - t0, g / 2**20, l / 2**20, len(lat), statuses), flush=True)
finally:
    stop.set()
    for t in threads: t.join()
with open(os.path.join(rt.VAR, "%d.log" % PORT)) as f:
    f.seek(log0); text = f.read()
built = len(re.findall(r"copy of a tenant's search data built", text))
print("peak gauge %.1f MB, peak live heap %.1f MB; searches %d %s p50 %.0f ms p99 %.0f ms; builds %d; OutOfMemoryError in log: %d; not built: %d"
      % (peak_gauge / 2**20, peak_live / 2**20, len(lat), statuses, 1000 * rt.pct(lat, 50), 1000 * rt.pct(lat, 99), built,
         text.count("OutOfMemoryError"), text.count("not built")))
