"""Connections that never finish their request (no auth needed): N connections (default 1000) send a
partial request head, and M idle ones send nothing; after HOLD s (default 150, past the 120 s body
timeout) counts how many the gateway still holds open, and whether a new request is served."""
import os, socket, time
import r5_rt as r
N = int(os.environ.get("N", "1000")); HOLD = int(os.environ.get("HOLD", "150"))
socks = []
for i in range(N):
    s = socket.create_connection((r.HOST, r.PORT))
    if i % 2 == 0:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-a: ")   # a head that never ends
    socks.append(s)
pid = open(os.path.join(r.VAR, "%d.pid" % r.PORT)).read().strip()
fds = lambda: len(os.listdir("/proc/%s/fd" % pid))
print("opened", N, "gateway fds", fds())
t0 = time.time()
while time.time() - t0 < HOLD:
    time.sleep(10)
    for s in socks:
        if s.fileno() >= 0 and socks.index(s) % 2 == 0:
            try: s.sendall(b"a")           # trickle one byte of the header every 10 s
            except OSError: pass
open_ = 0
for s in socks:
    s.setblocking(False)
    try:
        d = s.recv(1)
        open_ += 0 if d == b"" else 1
    except BlockingIOError:
        open_ += 1
    except OSError:
        pass
print("after %d s: %d of %d still open; gateway fds %d; a new request: %s" % (HOLD, open_, N, fds(), r.req("GET", "/healthz", auth=False)[0]))
for s in socks: s.close()
