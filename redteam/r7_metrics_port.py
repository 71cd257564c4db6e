"""R7-2 probe: no key. Silent connections to the metrics port (which now also serves /healthz and
/readyz, the liveness probe's target): no QUARRY_MAX_CONNECTIONS, no idle limit there.
Env: N (connections, default 300), HOLD (seconds, default 15)."""
import os, socket, time, urllib.request
import r7_rt as rt

N = int(os.environ.get("N", "300"))
HOLD = float(os.environ.get("HOLD", "15"))
MPORT = rt.PORT + 1000
pid = open(os.path.join(rt.VAR, "%d.pid" % rt.PORT)).read().strip()
fds = lambda: len(os.listdir("/proc/%s/fd" % pid))
print("gateway fds before:", fds())
held = [socket.create_connection((rt.HOST, MPORT)) for _ in range(N)]
time.sleep(HOLD)
alive = 0
for s in held:
    s.setblocking(False)
    try:
        alive += s.recv(1) != b""
    except BlockingIOError:
        alive += 1
    except OSError:
        pass
print("after %.0fs (idle limit 5 s on the API port): %d of %d silent metrics-port connections still open; gateway fds %d"
      % (HOLD, alive, N, fds()))
for s in held:
    s.close()
