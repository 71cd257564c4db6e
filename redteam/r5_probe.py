"""Probes the gateway as the second tenant (key2) every PERIOD s for DURATION s: search + list documents.
Prints one line per probe: time, status codes, latency; and a summary."""
import os, sys, time
import r5_rt as r
period = float(os.environ.get("PERIOD", "2")); duration = float(os.environ.get("DURATION", "60"))
t_end = time.time() + duration; lat = []; fails = 0
while time.time() < t_end:
    t = time.time()
    try:
        s1, d1, l1 = r.req("POST", "/v1/search", {"query": "probe %d" % int(t)}, k=r.key(2), timeout=30)
    except Exception as e:
        s1, l1 = repr(e)[:40], time.time() - t
    if s1 != 200:
        fails += 1
    lat.append(l1)
    print("%s search %s %.2fs" % (time.strftime("%H:%M:%S"), s1, l1), flush=True)
    time.sleep(max(0, period - (time.time() - t)))
lat.sort()
print("probes %d fails %d p50 %.2fs max %.2fs" % (len(lat), fails, lat[len(lat) // 2], lat[-1]))
