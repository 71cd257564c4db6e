"""R6-1 (MCP variant): one tenant holds connections for as long as it likes with `GET /mcp` event
streams, which never end and are never idle (heartbeats), so the guard never closes them. One stream
per session (a second GET on a session ends the first), but 64 sessions per tenant and replica
(McpTransport.MAX_SESSIONS_PER_TENANT): 64 connections per tenant, held until the client lets go
(the session sweep drops only sessions not used for 30 min; a client re-GETs now and then).
With QUARRY_MAX_CONNECTIONS=50 that is everyone locked out; at the default 4096 it takes 64 tenants.

Run against a gateway with a small cap so it is quick, e.g.
    RT_ENV="QUARRY_MAX_CONNECTIONS=50 QUARRY_HTTP_IDLE_SECONDS=5" ./r6_serve.sh
    N=60 HOLD=30 python3 r6_mcp_streams.py
Env: N (streams to open, one per session, default 60), HOLD (seconds to hold them, default 40).
"""
import json, os, socket, threading, time, http.client
import r6_rt as rt

N = int(os.environ.get("N", "60"))
HOLD = float(os.environ.get("HOLD", "40"))
MODE = os.environ.get("MODE", "mcp")


def probe(label):
    """One request of the other tenant (search) and one /healthz, each on a fresh connection."""
    out = []
    for name, method, path, body, k in (("search(tenant2)", "POST", "/v1/search", {"query": "revenue"}, rt.key(2)),
                                        ("healthz", "GET", "/healthz", None, None)):
        try:
            st, data, dt = rt.req(method, path, body, k=k, timeout=10, auth=k is not None)
            out.append("%s=%s %.2fs" % (name, st, dt))
        except Exception as e:
            out.append("%s=%s" % (name, type(e).__name__))
    print("%-22s %s" % (label, "  ".join(out)), flush=True)
    return out


def mcp_session():
    c = http.client.HTTPConnection(rt.HOST, rt.PORT, timeout=10)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "rt6", "version": "1"}}})
    c.request("POST", "/mcp", body=body, headers={"Authorization": "Bearer " + rt.key(), "Content-Type": "application/json",
                                                 "Accept": "application/json, text/event-stream"})
    r = c.getresponse()
    r.read()
    sid = r.getheader("Mcp-Session-Id")
    c.close()
    return sid


def open_stream(head):
    s = socket.create_connection((rt.HOST, rt.PORT), timeout=10)
    s.sendall(head)
    s.settimeout(10)
    first = s.recv(4096)
    return s, first


def main():
    probe("before")
    sessions = [mcp_session() for _ in range(min(N, 64))]
    print("%d mcp sessions" % len(sessions))
    held, statuses = [], {}
    for i in range(N):
        head = ("GET /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\n"
                "Mcp-Session-Id: %s\r\n\r\n" % (rt.key(), sessions[i % len(sessions)])).encode()
        try:
            s, first = open_stream(head)
            line = first.split(b"\r\n", 1)[0].decode()
            statuses[line] = statuses.get(line, 0) + 1
            if first:
                held.append(s)
            else:
                statuses["closed at once"] = statuses.get("closed at once", 0) + 1
        except Exception as e:
            statuses[type(e).__name__] = statuses.get(type(e).__name__, 0) + 1
    print("opened %d GET /mcp streams: %s" % (len(held), statuses), flush=True)
    t0 = time.time()
    while time.time() - t0 < HOLD:
        time.sleep(max(0, min(10, HOLD - (time.time() - t0))))
        probe("held %3.0fs" % (time.time() - t0))
    for s in held:
        s.close()
    time.sleep(1)
    probe("after closing them")


if __name__ == "__main__":
    main()
