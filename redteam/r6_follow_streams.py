"""R6-1: one tenant takes every connection the gateway allows (QUARRY_MAX_CONNECTIONS) by following
its own running analysis many times over (`GET /v1/analyses/{id}/events`, no limit per analysis
or tenant). An event stream is a request "under way" with heartbeats, so ConnectionGuard never
closes it; the cap is global, so every other tenant, /healthz and /readyz are refused for as long
as the analysis runs (up to QUARRY_MAX_ANALYSIS_MS, 30 min by default, and it can start another).

    RT_ENV="QUARRY_MAX_CONNECTIONS=50 QUARRY_HTTP_IDLE_SECONDS=5 QUARRY_MODEL_BASE_URL=..." ./r6_serve.sh
    N=60 CELLS=2 python3 r6_follow_streams.py
The analysis' cells each wait 30 s on llm() (r5_model.py answers prompts starting SLOW after 30 s).
"""
import json, os, socket, threading, time
import r6_rt as rt

N = int(os.environ.get("N", "60"))
CELLS = int(os.environ.get("CELLS", "3"))


def probe(label):
    out = []
    for name, method, path, body, k in (("search(tenant2)", "POST", "/v1/search", {"query": "revenue"}, rt.key(2)),
                                        ("healthz", "GET", "/healthz", None, None)):
        try:
            st, data, dt = rt.req(method, path, body, k=k, timeout=10, auth=k is not None)
            out.append("%s=%s %.2fs" % (name, st, dt))
        except Exception as e:
            out.append("%s=%s" % (name, type(e).__name__))
    print("%-26s %s" % (label, "  ".join(out)), flush=True)


def start_analysis():
    """Starts a streamed analysis on a socket of its own; returns the socket and the analysis id."""
    # `time` is refused in cells; a cell waiting on llm() is as good (r5_model.py answers a prompt
    # starting SLOW after 30 s, as a real model does for a long completion).
    cells = "".join("<<CELL>>r = await llm('SLOW please write a long essay')\nprint(r)<</CELL>>" for _ in range(CELLS))
    body = json.dumps({"question": "wait please " + cells, "stream": True,
                       "budgets": {"wall_time_ms": 600000}}).encode()
    s = socket.create_connection((rt.HOST, rt.PORT), timeout=30)
    s.sendall(("POST /v1/analyses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"
               "Accept: text/event-stream\r\nContent-Length: %d\r\n\r\n" % (rt.key(), len(body))).encode() + body)
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(4096)
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"x-analysis-id:"):
            return s, line.split(b":", 1)[1].strip().decode(), head.split(b"\r\n", 1)[0].decode()
    raise SystemExit("no analysis id: %r" % head[:300])


def main():
    probe("before")
    owner, aid, status = start_analysis()
    print("analysis %s (%s), %d cells each waiting 30 s on llm()" % (aid, status, CELLS), flush=True)
    head = ("GET /v1/analyses/%s/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
            "Accept: text/event-stream\r\n\r\n" % (aid, rt.key())).encode()
    held, statuses = [], {}
    for _ in range(N):
        try:
            s = socket.create_connection((rt.HOST, rt.PORT), timeout=10)
            s.sendall(head)
            first = s.recv(4096)
            line = first.split(b"\r\n", 1)[0].decode() or "closed at once"
            statuses[line] = statuses.get(line, 0) + 1
            (held if first else []).append(s)
        except Exception as e:
            statuses[type(e).__name__] = statuses.get(type(e).__name__, 0) + 1
    print("followers: %s" % statuses, flush=True)
    t0 = time.time()
    done = False
    while not done and time.time() - t0 < CELLS * 30 + 60:
        time.sleep(8)
        probe("held %3.0fs" % (time.time() - t0))
        owner.setblocking(False)
        try:
            while True:
                b = owner.recv(65536)
                if not b:
                    done = True
                    break
                if b"\r\n0\r\n\r\n" in b or b.startswith(b"0\r\n\r\n"):
                    done = True
        except BlockingIOError:
            pass
    print("analysis over after %.0fs" % (time.time() - t0), flush=True)
    for s in held:
        s.close()
    owner.close()
    time.sleep(1)
    probe("after")


if __name__ == "__main__":
    main()
