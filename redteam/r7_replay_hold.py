"""R7-1 (round 6's "held" replay, turned): with a small TCP MSS (TCP_MAXSEG, set by the client before connect)
the gateway's kernel send buffer stays tens of KB, so a stored replay of a few hundred KB never fits
in the socket buffers and waits for a drain that never comes. Round 6 text follows.

a client that asks for a finished analysis' stored events and never reads them holds its
connection for ever, and a page of events on the gateway's heap. The replay waits for the write queue
to drain before reading the next page (AnalysisRoutes.replayStored), the response is neither ended
nor closed, so ConnectionGuard counts it as a request under way and never closes it: no idle limit,
no deadline. N such requests take the global connection cap (everyone locked out, for good) and N
pages (up to all of an analysis' event characters each) of heap.

    RT_ENV="QUARRY_MAX_CONNECTIONS=50 QUARRY_HTTP_IDLE_SECONDS=5 QUARRY_MODEL_BASE_URL=..." ./r6_serve.sh
    N=60 HOLD=90 python3 r6_replay_hold.py
Makes (once, id kept in var6/replay_id) an analysis of 289 events whose first 200 are ~870 KB:
8 cells printing 60,000 characters, then one cell of 250 search() calls.
Env: N, HOLD (seconds), RCVBUF (the client's receive buffer, default 4096), PID (the gateway's pid,
for heap figures with jcmd; default var6/<port>.pid).
"""
import json, os, socket, subprocess, time
import r7_rt as rt

N = int(os.environ.get("N", "60"))
HOLD = float(os.environ.get("HOLD", "90"))
RCVBUF = int(os.environ.get("RCVBUF", "4096"))
MSS = int(os.environ.get("MSS", "536"))  # 0: leave the MSS alone (round 6's probe)
ID_FILE = os.path.join(rt.VAR, os.environ.get("ID_FILE", "replay_id"))


def analysis():
    if os.path.exists(ID_FILE):
        aid = open(ID_FILE).read().strip()
        st, _, _ = rt.req("GET", "/v1/analyses/" + aid)
        if st == 200:
            return aid
    rt.ingest("Revenue was 5 million in 2023. " * 50, uri="doc-a")
    big = "<<CELL>>print('y' * 60000)<</CELL>>" * 8
    cell = ("<<CELL>>for i in range(250):\n    try:\n        await search('revenue ' + 'q' * 3000)\n"
            "    except Exception as e:\n        pass\nprint('ok')<</CELL>>")
    st, data, _ = rt.req("POST", "/v1/analyses", {"question": "go " + big + cell, "budgets": {
        "search_calls": 500, "wall_time_ms": 600000, "tokens": 2000000}})
    d = json.loads(data)
    assert st == 200 and d["status"] == "succeeded", (st, str(d)[:300])
    open(ID_FILE, "w").write(d["id"])
    return d["id"]


def heap():
    pid = os.environ.get("PID") or open(os.path.join(rt.VAR, "%d.pid" % rt.PORT)).read().strip()
    try:
        subprocess.run(["jcmd", pid, "GC.run"], capture_output=True, timeout=60)
        out = subprocess.run(["jcmd", pid, "GC.heap_info"], capture_output=True, text=True, timeout=60).stdout
        for line in out.splitlines():
            if "used" in line and ("total" in line or "garbage-first" in line):
                return line.strip()
    except Exception as e:
        return "jcmd: %s" % e
    return "?"


def probe(label):
    out = []
    for name, method, path, body, k in (("search(tenant2)", "POST", "/v1/search", {"query": "revenue"}, rt.key(2)),
                                        ("healthz", "GET", "/healthz", None, None)):
        try:
            st, data, dt = rt.req(method, path, body, k=k, timeout=10, auth=k is not None)
            out.append("%s=%s %.2fs" % (name, st, dt))
        except Exception as e:
            out.append("%s=%s" % (name, type(e).__name__))
    print("%-22s %s" % (label, "  ".join(out)), flush=True)


def main():
    aid = analysis()
    st, data, dt = rt.req("GET", "/v1/analyses/%s/events" % aid)
    print("analysis %s: a full replay read at once is %d bytes, %d events, %.2fs" % (
        aid, len(data), data.count(b"\nevent:") + data.startswith(b"event:"), dt))
    probe("before")
    print("heap before: " + heap(), flush=True)
    head = ("GET /v1/analyses/%s/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n" % (aid, rt.key())).encode()
    held = []
    for _ in range(N):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)
        if MSS:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, MSS)
        try:
            s.settimeout(5)
            s.connect((rt.HOST, rt.PORT))
            s.sendall(head)
            held.append(s)  # never read
        except Exception as e:
            print("open:", type(e).__name__)
    time.sleep(2)
    print("%d replays asked, none read" % len(held), flush=True)
    t0 = time.time()
    while time.time() - t0 < HOLD:
        time.sleep(15)
        probe("held %3.0fs" % (time.time() - t0))
    print("heap while held: " + heap(), flush=True)
    alive = 0
    for s in held:
        try:
            s.setblocking(False)
            s.send(b"")
            # a connection the gateway closed shows as readable EOF only after the buffered bytes;
            # ask the kernel: a closed peer makes recv with MSG_PEEK fail or return b"" eventually.
            alive += 1
        except OSError:
            pass
    sendq = subprocess.run(["ss", "-tnH", "state", "established", "( sport = :%d )" % rt.PORT],
                           capture_output=True, text=True).stdout.split()
    print("gateway-side sockets of this port still established: %d" % (
        subprocess.run(["ss", "-tnH", "state", "established", "( sport = :%d )" % rt.PORT],
                       capture_output=True, text=True).stdout.count("\n")), flush=True)
    for s in held:
        s.close()
    time.sleep(2)
    probe("after closing them")
    print("heap after: " + heap(), flush=True)


if __name__ == "__main__":
    main()
