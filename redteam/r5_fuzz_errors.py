"""Every error a clear 4xx: malformed inputs to each route (gateway on RT_PORT). Flags any 5xx, any
non-JSON error body and any response over 10 s. Prints only the flagged ones and a count."""
import json, random, time, uuid
import r5_rt as r
random.seed(7)
U = str(uuid.uuid4())
weird = [None, True, 0, -1, 1.5, 2**63, 10**30, -2**63 - 1, "", " ", "\u0000", "x" * 5000, [], {}, [None], {"a": 1},
         "NaN", float("inf") if False else 1e308, "𝔘", "\ud800", [U] * 3, ["not-a-uuid"], [U, 1]]
routes = [
    ("POST", "/v1/search", ["query", "limit", "document_ids"]),
    ("POST", "/v1/executions", ["code", "document_ids", "limits", "stream"]),
    ("POST", "/v1/analyses", ["question", "document_ids", "preload", "budgets", "stream"]),
    ("POST", "/v1/documents", ["content", "uri", "title", "content_type"]),
    ("POST", "/v1/chat/completions", ["model", "messages", "stream", "stream_options", "document_ids", "budgets", "temperature", "n", "tools"]),
]
flagged = 0; sent = 0
def send(method, path, body, raw=None):
    global flagged, sent
    sent += 1
    try:
        if raw is not None:
            st, d, dt = r.req(method, path, raw, headers={"Content-Type": "application/json"}, timeout=30)
        else:
            st, d, dt = r.req(method, path, body, timeout=30)
    except Exception as e:
        flagged += 1; print("EXC", method, path, repr(body)[:150], e); return
    bad = st >= 500 or dt > 10
    if st >= 400:
        try:
            e = json.loads(d)["error"]; assert e.get("message")
        except Exception:
            bad = True
    if bad:
        flagged += 1
        print(st, "%.1fs" % dt, method, path, repr(body if raw is None else raw)[:160], d[:200])
for method, path, fields in routes:
    for f in fields:
        for w in weird:
            body = {"model": "quarry", "messages": [{"role": "user", "content": "hi <<CELL>>print(1)<</CELL>>"}]} if "chat" in path else \
                   {"question": "hi <<CELL>>print(1)<</CELL>>"} if "analyses" in path else {"query": "q"} if "search" in path else \
                   {"code": "print(1)"} if "executions" in path else {"content": "fuzz text %s" % uuid.uuid4()}
            body[f] = w
            send(method, path, body)
    for raw in [b"", b"{", b"[]", b"null", b"1", b'"x"', b'{"a":1,"a":2}', b"{\"query\": \"\\u0000\"}", b"\xff\xfe", b'{"query":' * 2000,
                b'{"query": "q", "limit": 1e400}', b'{"query": "q", "limit": -0}', b'{"query": "q", "limit": 1.0}']:
        send(method, path, None, raw)
# budgets / limits objects
for b in [{"model_turns": 0}, {"model_turns": 10**12}, {"wall_time_ms": -5}, {"tokens": "x"}, {"nope": 1}, {"llm_calls": 1.5}]:
    send("POST", "/v1/analyses", {"question": "q", "budgets": b})
for l in [{"wall_time_ms": 0}, {"wall_time_ms": 10**12}, {"max_output_chars": -1}, {"callbacks": 0}, {"nope": 1}, {"wall_time_ms": 1.0}]:
    send("POST", "/v1/executions", {"code": "print(1)", "limits": l})
# chat message shapes
for m in [[], [{"role": "user"}], [{"role": "tool", "content": "x"}], [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}],
          [{"role": "user", "content": [{"type": "text"}]}], [{"role": "assistant", "content": "x"}], [{"role": "user", "content": 5}],
          [{"role": "system", "content": "x"}], [{"role": "user", "content": "x", "name": 5}], [{"role": "user", "content": "x"}] * 5000, ["x"]]:
    send("POST", "/v1/chat/completions", {"model": "quarry", "messages": m})
# GET parameters and ids
for p in ["/v1/documents?limit=abc", "/v1/documents?limit=0", "/v1/documents?limit=99999999999999999999", "/v1/documents?limit=5&cursor=zzz",
          "/v1/documents?limit=5&cursor=" + "A" * 3000, "/v1/documents?limit=1&limit=2", "/v1/analyses?limit=-1", "/v1/analyses?limit=x",
          "/v1/documents/not-a-uuid", "/v1/documents/%s/chunks/nope" % U, "/v1/analyses/nope", "/v1/analyses/%s/events" % U,
          "/v1/models/quarry", "/v1/models/other", "/v1/documents/" + U.upper(), "/console/nope.js", "/console/index.html"]:
    send("GET", p, None)
send("POST", "/v1/analyses/%s/replay" % U, None)
# MCP JSON-RPC shapes
h = {"Accept": "application/json, text/event-stream"}
for body in [b"{", b"[]", b'{"jsonrpc":"2.0"}', b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}',
             b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":5}', b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]' * 1]:
    sent += 1
    st, d, dt = r.req("POST", "/mcp", body, headers=dict(h, **{"Content-Type": "application/json"}))
    if st >= 500: flagged += 1; print("MCP", st, body[:80], d[:200])
print("sent", sent, "flagged", flagged)
