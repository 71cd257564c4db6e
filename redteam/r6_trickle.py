"""R6-1 (variant): a tenant's request whose body trickles in (one byte every TRICKLE s) is a request
under way, so ConnectionGuard never closes it; only the body deadline (QUARRY_BODY_TIMEOUT_MS,
120 s by default) does, and the client opens another. Without a key the 401 ends the request and the
idle limit closes the connection (held).
    N=20 HOLD=30 python3 r6_trickle.py
"""
import os, socket, time
import r6_rt as rt
N = int(os.environ.get("N", "20")); HOLD = float(os.environ.get("HOLD", "30")); TRICKLE = float(os.environ.get("TRICKLE", "2"))

def opened(key):
    s = socket.create_connection((rt.HOST, rt.PORT), timeout=5)
    auth = "Authorization: Bearer %s\r\n" % key if key else ""
    s.sendall(("POST /v1/search HTTP/1.1\r\nHost: x\r\n%sContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{" % auth).encode())
    return s

for label, key in (("with a tenant key", rt.key()), ("without a key", None)):
    socks = [opened(key) for _ in range(N)]
    t0 = time.time(); alive = len(socks)
    while time.time() - t0 < HOLD:
        time.sleep(TRICKLE)
        alive = 0
        for s in socks:
            try:
                s.sendall(b" ")
                s.setblocking(False)
                try:
                    b = s.recv(4096)
                    if b == b"":
                        raise OSError
                except BlockingIOError:
                    pass
                s.setblocking(True)
                alive += 1
            except OSError:
                pass
    print("%-18s %d connections trickling a body: %d still open after %.0f s" % (label, N, alive, time.time() - t0), flush=True)
    for s in socks: s.close()
