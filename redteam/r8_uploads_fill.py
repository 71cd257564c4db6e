"""Issue 33 class 3 (shared filesystems): one tenant fills the uploads directory (QUARRY_DATA_DIR/uploads,
the pod's 2 GiB `data` emptyDir) with request bodies it never finishes: BodyPlaces allows 32 bodies per
tenant and each may be QUARRY_MAX_UPLOAD_BYTES (50 MiB), spooled to disk as it arrives. Then the quiet
tenant (key2) uploads ordinary large files (HOLD=0 skips the hold). Prints df of the data dir, the
quiet tenant's answers (any host path in them), its search latency during the hold, and the heap.
Env: N (32), MIB (49: body size), QUIET (6: quiet uploads of QUIET_MIB 40 MiB at once)."""
import json, os, socket, subprocess, threading, time, uuid
import r8_rt as rt, r8_lat as lat

N = int(os.environ.get("N", "32")); MIB = int(os.environ.get("MIB", "49"))
QUIET = int(os.environ.get("QUIET", "6")); QUIET_MIB = int(os.environ.get("QUIET_MIB", "40"))
DATA = os.path.join(rt.VAR, "data")

def df():
    out = subprocess.run(["df", "-m", "--output=used,avail", DATA], capture_output=True, text=True).stdout.split()
    return "data dir used %s MiB avail %s MiB" % (out[-2], out[-1])

def held_upload(i, socks):
    b = "----r8" + uuid.uuid4().hex
    head = ("--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f%d.txt\"\r\n"
            "Content-Type: text/plain\r\n\r\n" % (b, i)).encode()
    tail = ("\r\n--%s--\r\n" % b).encode()
    size = MIB << 20
    body_len = len(head) + size + len(tail)
    s = socket.create_connection((rt.HOST, rt.PORT), timeout=300)
    s.sendall(("POST /v1/documents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
               "Content-Type: multipart/form-data; boundary=%s\r\nContent-Length: %d\r\n\r\n"
               % (rt.key(), b, body_len)).encode() + head)
    chunk = (b"lorem ipsum dolor sit amet " * 40000)[: 1 << 20]
    for _ in range(size >> 20):
        s.sendall(chunk)
    # the tail (and the last bytes) are never sent: the body stays "arriving" until the body timeout
    socks.append(s)

def quiet_upload(i, out):
    data = (b"quiet tenant's report line %d\n" % i) * ((QUIET_MIB << 20) // 30)
    b = "----q" + uuid.uuid4().hex
    body = (("--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"q%d.txt\"\r\n"
             "Content-Type: text/plain\r\n\r\n" % (b, i)).encode() + data + ("\r\n--%s--\r\n" % b).encode())
    try:
        st, d, dt = rt.req("POST", "/v1/documents", body, k=rt.key(2),
                           headers={"Content-Type": "multipart/form-data; boundary=" + b}, timeout=600)
        out.append((st, round(dt, 1), d[:400].decode("utf-8", "replace")))
    except Exception as e:
        out.append(("EXC", repr(e)[:200]))

if __name__ == "__main__":
    lat.quiet_setup()
    print(df()); lat.mem("before")
    socks = []; ts = []
    if os.environ.get("HOLD", "1") != "0":
        t0 = time.time()
        for i in range(N):
            t = threading.Thread(target=held_upload, args=(i, socks)); t.start(); ts.append(t)
        for t in ts: t.join()
        print("held %d bodies of %d MiB in %.1fs; %s" % (len(socks), MIB, time.time() - t0, df()))
        lat.mem("holding")
        # one more from the noisy tenant: refused?
        st, d, dt = rt.req("POST", "/v1/documents", {"content": "x"}, timeout=30)
        print("noisy's 33rd body:", st, d[:200])
    out = []; qs = [threading.Thread(target=quiet_upload, args=(i, out)) for i in range(QUIET)]
    for t in qs: t.start()
    lat.measure(30, "quiet search while uploads")
    for t in qs: t.join()
    for o in out: print("quiet upload:", o)
    print(df()); lat.mem("after")
    for s in socks: s.close()
    time.sleep(3); print("released:", df())
