"""R6-1 (no key): the connection cap is one number for every client; nothing limits one address.
A client with no key keeps N >= QUARRY_MAX_CONNECTIONS silent connections open and opens a new one
as soon as the guard closes one (after QUARRY_HTTP_IDLE_SECONDS). Measured: how many of the other
clients' requests (a tenant's search, /healthz, one every 0.5 s) get through.

    N=50 HOLD=30 python3 r6_cap_lockout.py     (N = the cap: 50 held, each reopened when the guard closes it)
    N=60 ...: the 10 over the cap are closed at once and reopened in a loop (250,000 in 30 s)
"""
import os, selectors, socket, threading, time
import r6_rt as rt

N = int(os.environ.get("N", "50"))
HOLD = float(os.environ.get("HOLD", "30"))
stop = False
reopened = [0]


def attacker():
    sel = selectors.DefaultSelector()

    def open_one():
        try:
            s = socket.create_connection((rt.HOST, rt.PORT), timeout=2)
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ)
            reopened[0] += 1
        except OSError:
            time.sleep(0.05)

    for _ in range(N):
        open_one()
    while not stop:
        for key, _ in sel.select(timeout=0.2):
            s = key.fileobj
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if not data:
                sel.unregister(s)
                s.close()
                open_one()
        while len(sel.get_map()) < N and not stop:
            open_one()
    for key in list(sel.get_map().values()):
        key.fileobj.close()


def main():
    t = threading.Thread(target=attacker)
    t.start()
    time.sleep(2)
    ok = fail = 0
    t0 = time.time()
    while time.time() - t0 < HOLD:
        for method, path, body, k in (("POST", "/v1/search", {"query": "revenue"}, rt.key(2)), ("GET", "/healthz", None, None)):
            try:
                st, _, _ = rt.req(method, path, body, k=k, timeout=5, auth=k is not None)
                ok += st == 200
                fail += st != 200
            except Exception:
                fail += 1
        time.sleep(0.5)
    global stop
    stop = True
    t.join()
    print("%d silent connections kept open (%d opened in all over %.0f s): other clients' requests %d ok, %d refused/failed"
          % (N, reopened[0], HOLD, ok, fail))
    time.sleep(1)
    print("after: healthz", rt.req("GET", "/healthz", auth=False, timeout=5)[0])


if __name__ == "__main__":
    main()
