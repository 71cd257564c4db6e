"""A tenant's CPU against another's latency: K executions (default 8, the tenant's sandbox share)
of `while True: pass` for SECONDS (default 20) at once, while the second tenant searches and runs a
one-line execution every second. Prints the victim's latencies before and during."""
import os, threading, time
import r5_rt as r
K = int(os.environ.get("K", "8")); SECONDS = int(os.environ.get("SECONDS", "20"))
def victim(duration, out):
    end = time.time() + duration
    while time.time() < end:
        _, _, a = r.req("POST", "/v1/search", {"query": "cpu %f" % time.time()}, k=r.key(2))
        st, _, b = r.req("POST", "/v1/executions", {"code": "print(sum(range(1000)))"}, k=r.key(2))
        out.append((a, b, st)); time.sleep(1)
def summary(label, out):
    s = sorted(x[0] for x in out); e = sorted(x[1] for x in out)
    print("%-7s search p50 %.3f max %.3f | execution p50 %.2f max %.2f | statuses %s" % (label, s[len(s)//2], s[-1], e[len(e)//2], e[-1], sorted(set(x[2] for x in out))))
base = []; victim(8, base); summary("before", base)
during = []
ts = [threading.Thread(target=lambda: r.req("POST", "/v1/executions", {"code": "while True:\n    pass", "limits": {"wall_time_ms": SECONDS * 1000}})) for _ in range(K)]
[t.start() for t in ts]; time.sleep(3)
victim(SECONDS - 4, during); summary("during", during)
[t.join() for t in ts]
