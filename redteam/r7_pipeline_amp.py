"""R7 probe: no key. One connection sends many pipelined GETs of a public console file (48 bytes
each, ~11.9 KB answered) and never reads. Does the gateway keep answering into its own memory
(Netty's outbound buffer, direct memory), and does closing the connection (idle limit / eviction)
free it while the client reads nothing?
Env: CONNS (connections, default 1), REQS (pipelined requests per connection, default 5000),
WAVES (default 1: CONNS connections opened WAVES times, WAIT seconds apart, default 8), HOLD (seconds to hold, default 20), MSS (client TCP_MAXSEG before connect, default 536; 0 = leave).
"""
import os, socket, subprocess, time, urllib.request
import r7_rt as rt

CONNS = int(os.environ.get("CONNS", "1"))
REQS = int(os.environ.get("REQS", "5000"))
HOLD = float(os.environ.get("HOLD", "20"))
MSS = int(os.environ.get("MSS", "536"))
WAVES = int(os.environ.get("WAVES", "1"))
WAIT = float(os.environ.get("WAIT", "8"))
GAP = float(os.environ.get("GAP", "0"))  # seconds between connections
PATH = os.environ.get("PATH_", "/console/documents.js")
MPORT = rt.PORT + 1000


def mem():
    try:
        t = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % MPORT, timeout=10).read().decode()
    except Exception as e:
        return "metrics: %s" % type(e).__name__
    out = {}
    for l in t.splitlines():
        if l.startswith("jvm_buffer_memory_used_bytes") and 'id="direct"' in l:
            out["direct"] = float(l.split()[-1]) / 1e6
        if l.startswith("jvm_memory_used_bytes") and 'area="heap"' in l:
            out["heap"] = out.get("heap", 0) + float(l.split()[-1]) / 1e6
        if l.startswith("netty_allocator_memory_used") and 'direct' in l:
            out["netty_direct"] = out.get("netty_direct", 0) + float(l.split()[-1]) / 1e6
    pid = open(os.path.join(rt.VAR, "%d.pid" % rt.PORT)).read().strip()
    rss = [l for l in open("/proc/%s/status" % pid) if l.startswith("VmRSS")][0].split()[1]
    fds = len(os.listdir("/proc/%s/fd" % pid))
    return "direct %.1f MB  heap %.1f MB  netty-direct %.1f MB  RSS %.0f MB  fds %d" % (
        out.get("direct", -1), out.get("heap", -1), out.get("netty_direct", -1), int(rss) / 1024, fds)


def probe():
    try:
        st, _, dt = rt.req("POST", "/v1/search", {"query": "revenue"}, k=rt.key(2), timeout=10)
        return "search(tenant2)=%s %.2fs" % (st, dt)
    except Exception as e:
        return "search(tenant2)=%s" % type(e).__name__


def main():
    print("before:", mem(), probe(), flush=True)
    one = ("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % PATH).encode()
    held = []
    t0 = time.time()
    for w in range(WAVES * CONNS):
      if w and w % CONNS == 0:
        time.sleep(WAIT)
        est = subprocess.run("ss -tnH state established '( sport = :%d )' | wc -l" % rt.PORT, shell=True,
                             capture_output=True, text=True).stdout.strip()
        print("wave %d: %s  gateway-side established %s  %s" % (w // CONNS, mem(), est, probe()), flush=True)
      if True:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        if MSS:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, MSS)
        s.connect((rt.HOST, rt.PORT))
        s.settimeout(10)
        try:
            s.sendall(one * REQS)
        except Exception as e:
            print("send:", type(e).__name__)
        held.append(s)
        if GAP:
            time.sleep(GAP)
    print("sent %d x %d pipelined requests (%d bytes each conn) in %.1fs" % (CONNS, REQS, len(one) * REQS, time.time() - t0), flush=True)
    t0 = time.time()
    while time.time() - t0 < HOLD:
        time.sleep(5)
        est = subprocess.run("ss -tnH state established '( sport = :%d )' | wc -l" % rt.PORT, shell=True,
                             capture_output=True, text=True).stdout.strip()
        print("held %3.0fs: %s  gateway-side established %s  %s" % (time.time() - t0, mem(), est, probe()), flush=True)
    for s in held:
        s.close()
    time.sleep(3)
    print("after close:", mem(), probe(), flush=True)


if __name__ == "__main__":
    main()
