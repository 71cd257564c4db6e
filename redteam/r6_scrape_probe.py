"""R6-2 (impact): while /metrics is scraped (as Prometheus does every 15-30 s), another tenant's
searches and /healthz on the API port. Run after r6_method_labels.py.
    SCRAPES=5 python3 r6_scrape_probe.py
"""
import os, threading, time, urllib.request, urllib.error
import r6_rt as rt

SCRAPES = int(os.environ.get("SCRAPES", "5"))
METRICS = int(os.environ.get("METRICS", str(rt.PORT + 1000)))
stop = False
lat, errors = [], {}


def probe():
    while not stop:
        try:
            st, _, dt = rt.req("POST", "/v1/search", {"query": "revenue"}, k=rt.key(2), timeout=30)
            lat.append(dt)
            if st != 200:
                errors[st] = errors.get(st, 0) + 1
        except Exception as e:
            errors[type(e).__name__] = errors.get(type(e).__name__, 0) + 1
        time.sleep(0.1)


def summary(label):
    s = sorted(lat)
    if s:
        print("%-8s searches %d: p50 %.3fs max %.3fs; errors %s" % (label, len(s), s[len(s) // 2], s[-1], errors), flush=True)
    lat.clear(); errors.clear()


t = threading.Thread(target=probe); t.start()
time.sleep(5); summary("quiet")
for i in range(SCRAPES):
    t0 = time.time()
    try:
        r = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % METRICS, timeout=120)
        n = len(r.read()); st = r.status
    except urllib.error.HTTPError as e:
        n, st = 0, e.code
    except Exception as e:
        n, st = 0, type(e).__name__
    print("scrape %d: %s, %d bytes, %.1fs" % (i, st, n, time.time() - t0), flush=True)
    time.sleep(2)
summary("scrapes")
stop = True; t.join()
