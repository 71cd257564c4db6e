"""R5-6: idle connections are never closed (no idle or request-head timeout: only bodies have one),
so an unauthenticated client can hold the gateway's file descriptors (limit N, default 19500 of its
20000) and see what a tenant gets meanwhile: healthz, search, an execution, an upload."""
import os, resource, socket, time
import r5_rt as r
N = int(os.environ.get("N", "19500"))
resource.setrlimit(resource.RLIMIT_NOFILE, (min(N + 500, resource.getrlimit(resource.RLIMIT_NOFILE)[1]),) * 2)
pid = open(os.path.join(r.VAR, "%d.pid" % r.PORT)).read().strip()
import json
DOC = json.loads(r.req("GET", "/v1/documents?limit=1", k=r.key(2))[1])["documents"][0]["id"]
socks = []; failed = 0
for i in range(N):
    try:
        s = socket.create_connection((r.HOST, r.PORT), timeout=2); socks.append(s)
    except OSError:
        failed += 1
time.sleep(3)
print("held", len(socks), "(failed to open %d); gateway fds %d" % (failed, len(os.listdir("/proc/%s/fd" % pid))))
def attempt(label, f):
    t = time.time()
    try:
        st, d, dt = f()
        print("%-12s %s %.1fs %s" % (label, st, time.time() - t, d[:160] if isinstance(d, bytes) else str(d)[:160]))
    except Exception as e:
        print("%-12s FAILED after %.1fs: %r" % (label, time.time() - t, e))
# free a few of our own so that the probes can connect at all (as a client elsewhere could)
FREE = int(os.environ.get("FREE", "20"))
for s in socks[:FREE]: s.close()
socks = socks[FREE:]
attempt("healthz", lambda: r.req("GET", "/healthz", auth=False, timeout=15))
attempt("search", lambda: r.req("POST", "/v1/search", {"query": "fd probe %f" % time.time()}, k=r.key(2), timeout=15))
attempt("execution", lambda: r.req("POST", "/v1/executions", {"code": "print(1)"}, k=r.key(2), timeout=30))
attempt("scoped exec", lambda: r.req("POST", "/v1/executions", {"code": "print(1)", "document_ids": [DOC]}, k=r.key(2), timeout=30))
attempt("upload", lambda: r.req("POST", "/v1/documents", {"content": "fd test %f" % time.time()}, k=r.key(2), timeout=30))
for s in socks: s.close()
time.sleep(2)
attempt("after: exec", lambda: r.req("POST", "/v1/executions", {"code": "print(1)"}, k=r.key(2), timeout=30))
