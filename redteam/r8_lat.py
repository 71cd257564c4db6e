"""Round 8: the quiet tenant's (key2) search latency and the gateway's heap/RSS, for the r8_* attacks."""
import json, os, re, statistics, threading, time, uuid
import r8_rt as rt

WORDS = "revenue margin liquidity covenant dividend segment impairment goodwill lease pension".split()

def quiet_setup():
    st, data, _ = rt.req("GET", "/v1/documents?limit=1", k=rt.key(2))
    if st == 200 and json.loads(data).get("documents"):
        return
    text = "\n\n".join("Paragraph %d about %s and %s in the quarterly report." % (i, WORDS[i % 10], WORDS[(i * 3) % 10]) for i in range(200))
    rt.ingest(text, uri="quiet/report.txt", k=rt.key(2))

def search_once(i):
    # a fresh query each time, so the query-vector cache does not answer
    q = "%s %s %s" % (WORDS[i % 10], WORDS[(i * 7) % 10], uuid.uuid4().hex[:6])
    st, data, dt = rt.req("POST", "/v1/search", {"query": q, "limit": 5}, k=rt.key(2), timeout=120)
    return st, dt

def measure(n=50, label="quiet search", pause=0.1):
    lat, fails = [], []
    for i in range(n):
        try:
            st, dt = search_once(i)
        except Exception as e:  # a timeout or a refused connection counts as a failure
            st, dt = repr(e)[:60], 120.0
        lat.append(dt)
        if st != 200:
            fails.append(st)
        time.sleep(pause)
    lat.sort()
    p50 = statistics.median(lat); p95 = lat[min(len(lat) - 1, int(0.95 * len(lat)))]
    print("%-34s n=%d p50 %.3fs p95 %.3fs max %.3fs fails %d %s" % (label, n, p50, p95, lat[-1], len(fails), fails[:5]))
    return p50, p95, fails

def pid():
    return int(open(os.path.join(rt.VAR, "pid")).read())

def mem(label=""):
    """RSS from /proc and the heap in use from the metrics port."""
    rss = int(re.search(r"VmRSS:\s+(\d+)", open("/proc/%d/status" % pid()).read()).group(1)) // 1024
    heap = "?"
    try:
        st, data, _ = rt.req("GET", "/metrics", auth=False, port=rt.PORT + 1, timeout=10)
        used = sum(float(l.split()[-1]) for l in data.decode().splitlines()
                   if l.startswith("jvm_memory_used_bytes") and 'area="heap"' in l)
        heap = "%d" % (used / 2**20)
    except Exception as e:
        heap = repr(e)[:40]
    print("%-34s rss %s MiB heap %s MiB" % (label, rss, heap))
    return rss, heap

class Sampler(threading.Thread):
    """Samples RSS/heap every second; max_rss/max_heap at the end."""
    def __init__(self):
        super().__init__(daemon=True); self.stop = False; self.max_rss = 0; self.max_heap = 0
    def run(self):
        while not self.stop:
            try:
                rss = int(re.search(r"VmRSS:\s+(\d+)", open("/proc/%d/status" % pid()).read()).group(1)) // 1024
                self.max_rss = max(self.max_rss, rss)
                st, data, _ = rt.req("GET", "/metrics", auth=False, port=rt.PORT + 1, timeout=5)
                used = sum(float(l.split()[-1]) for l in data.decode().splitlines()
                           if l.startswith("jvm_memory_used_bytes") and 'area="heap"' in l)
                self.max_heap = max(self.max_heap, used / 2**20)
            except Exception:
                pass
            time.sleep(1)

if __name__ == "__main__":
    quiet_setup()
    mem("baseline")
    measure(50, "quiet search alone")
