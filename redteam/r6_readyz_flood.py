"""Probe: /readyz needs no key and runs every check each time (two database queries, a Docker ping
and a mountinfo read on the worker pool; no cache, no rate limit). C clients flood it for SECS s
while tenant 2 searches; also counts Docker daemon pings.
    C=8 SECS=20 python3 r6_readyz_flood.py
"""
import http.client, os, threading, time
import r6_rt as rt
C = int(os.environ.get("C", "8")); SECS = float(os.environ.get("SECS", "20"))
stop = False; n = [0]; codes = {}
def flood():
    c = http.client.HTTPConnection(rt.HOST, rt.PORT, timeout=30)
    while not stop:
        try:
            c.request("GET", "/readyz"); r = c.getresponse(); r.read()
            codes[r.status] = codes.get(r.status, 0) + 1; n[0] += 1
        except Exception:
            c.close(); c = http.client.HTTPConnection(rt.HOST, rt.PORT, timeout=30)
def lat(label, secs):
    l = []; t0 = time.time()
    while time.time() - t0 < secs:
        st, _, dt = rt.req("POST", "/v1/search", {"query": "revenue growth"}, k=rt.key(2), timeout=30); l.append(dt); time.sleep(0.2)
    l.sort(); print("%-10s tenant2 search n=%d p50 %.3fs p95 %.3fs max %.3fs" % (label, len(l), l[len(l)//2], l[int(len(l)*.95)], l[-1]), flush=True)
lat("quiet", 8)
ts = [threading.Thread(target=flood) for _ in range(C)]; [t.start() for t in ts]
t0 = time.time(); lat("flood", SECS)
stop = True; [t.join() for t in ts]
print("/readyz: %d answered in %.0f s (%.0f/s): %s" % (n[0], time.time() - t0, n[0] / (time.time() - t0), codes))
lat("after", 5)
