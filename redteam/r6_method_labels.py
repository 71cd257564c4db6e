"""R6-2: the HTTP method is a metric label, and any token is a method: every request with a method
never seen before (no key needed; it is answered 405) adds a family of time series to the
registry for good: heap that only grows, and a /metrics scrape that grows with it (each series line
repeats the method, up to ~4 KB).

    N=3000 LEN=1000 python3 r6_method_labels.py
Env: N (distinct methods), LEN (characters per method), CONNS (parallel connections, default 4),
METRICS (the metrics port, default RT_PORT+1000), PID (gateway pid for heap figures).
"""
import os, socket, subprocess, threading, time, urllib.request
import r6_rt as rt

N = int(os.environ.get("N", "3000"))
LEN = int(os.environ.get("LEN", "1000"))
CONNS = int(os.environ.get("CONNS", "4"))
METRICS = int(os.environ.get("METRICS", str(rt.PORT + 1000)))


def scrape():
    t0 = time.time()
    data = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % METRICS, timeout=120).read()
    lines = [l for l in data.split(b"\n") if l and not l.startswith(b"#")]
    return len(data), len(lines), time.time() - t0


def heap():
    pid = os.environ.get("PID") or open(os.path.join(rt.VAR, "%d.pid" % rt.PORT)).read().strip()
    try:
        subprocess.run(["jcmd", pid, "GC.run"], capture_output=True, timeout=60)
        out = subprocess.run(["jcmd", pid, "GC.heap_info"], capture_output=True, text=True, timeout=60).stdout
        return [l.strip() for l in out.splitlines() if "used" in l][0]
    except Exception as e:
        return "jcmd: %s" % e


def worker(ids, statuses, lock):
    s = None
    for i in ids:
        method = ("M%d" % i).ljust(LEN, "A")
        for attempt in range(3):
            try:
                if s is None:
                    s = socket.create_connection((rt.HOST, rt.PORT), timeout=10)
                    f = s.makefile("rb")
                s.sendall(("%s /healthz HTTP/1.1\r\nHost: x\r\n\r\n" % method).encode())
                status = f.readline().split(b" ")[1].decode()
                length = 0
                while True:
                    line = f.readline()
                    if line in (b"\r\n", b""):
                        break
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                f.read(length)
                with lock:
                    statuses[status] = statuses.get(status, 0) + 1
                break
            except Exception:
                try:
                    s.close()
                except Exception:
                    pass
                s = None


def main():
    print("before: /metrics %d bytes, %d series, %.2fs; heap %s" % (scrape() + (heap(),)), flush=True)
    statuses, lock = {}, threading.Lock()
    t0 = time.time()
    threads = [threading.Thread(target=worker, args=(range(k, N, CONNS), statuses, lock)) for k in range(CONNS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("%d requests with distinct %d-char methods in %.1fs: %s" % (N, LEN, time.time() - t0, statuses), flush=True)
    print("after:  /metrics %d bytes, %d series, %.2fs; heap %s" % (scrape() + (heap(),)), flush=True)


if __name__ == "__main__":
    main()
