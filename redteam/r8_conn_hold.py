"""Issue 33 (connections cap, class 2): one tenant holds the gateway's connection cap
(QUARRY_MAX_CONNECTIONS, 4096) with answers it reads just fast enough not to be cut: GET
/v1/documents/{id}/items of a ~3 MB document on sockets with a 4 KiB receive buffer, 8 KiB read from
each every READ_EVERY (5) s. ConnectionGuard never closes a connection whose request is under way,
and at the cap it closes each new connection as it comes when all are busy; ResponseStreams' stall
watch cuts only a client that takes nothing for 15 s. Then the quiet tenant searches.
Env: DOC (a document id of the noisy tenant), M (connections), HOLD_S (seconds to hold)."""
import os, socket, time, selectors, json
import r8_rt as rt, r8_lat as lat

M = int(os.environ.get("M", "50")); HOLD_S = int(os.environ.get("HOLD_S", "60"))
READ_EVERY = float(os.environ.get("READ_EVERY", "5"))
DOC = os.environ["DOC"]

def open_one():
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect((rt.HOST, rt.PORT)); s.settimeout(0)
    s.sendall(("GET /v1/documents/%s/items HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n" % (DOC, rt.key())).encode())
    return s

if __name__ == "__main__":
    socks, got, refused = [], {}, 0
    t0 = time.time()
    for i in range(M):
        try:
            socks.append(open_one())
        except OSError as e:
            refused += 1
        if i % 50 == 49: print("opened", i + 1, "in %.0fs" % (time.time() - t0), flush=True)
    print("opened %d (refused %d) in %.1fs" % (len(socks), refused, time.time() - t0))
    statuses = {}
    end = time.time() + HOLD_S; alive = list(socks)
    while time.time() < end:
        for s in list(alive):
            try:
                b = s.recv(8192)
                if not b:
                    alive.remove(s); continue
                if s not in got:
                    statuses[s] = b[:12].decode("latin-1")
                got[s] = got.get(s, 0) + len(b)
            except BlockingIOError:
                pass
            except OSError:
                alive.remove(s)
        time.sleep(READ_EVERY)
    from collections import Counter
    print("after %ds: %d of %d still open; statuses %s; bytes read per conn ~%d" % (
        HOLD_S, len(alive), len(socks), Counter(statuses.values()), sum(got.values()) // max(1, len(got))))
    lat.mem("holding")
    if os.environ.get("QUIET", "1") == "1":
        lat.measure(int(os.environ.get("QN", "20")), "quiet search while held", pause=0.2)
    for s in socks: s.close()
