"""Cross-tenant reads through every tenant route (gateway on RT_PORT with the scripted model):
tenant B (key2) owns a document, a chunk and an analysis; tenant A (key) asks for each of them by id,
in scopes, preloads, replays, event streams, chat completions and MCP. Prints status and whether any
of B's text came back (marker SECRETB)."""
import json, uuid
import r5_rt as r
A, B = r.key(1), r.key(2)
doc = r.ingest("SECRETB revenue of the victim was 99 million. " * 5, uri="secretb-%s.txt" % uuid.uuid4().hex[:6], k=B)
did = doc["id"]
hits = json.loads(r.req("POST", "/v1/search", {"query": "SECRETB revenue", "limit": 3}, k=B)[1])["results"]
cid = hits[0]["chunk_id"]
st, d, _ = r.req("POST", "/v1/analyses", {"question": "B's <<CELL>>print(await search('SECRETB'))<</CELL>>"}, k=B)
aid = json.loads(d)["id"]
mydoc = r.ingest("tenant A's own text %s" % uuid.uuid4(), k=A)["id"]
leaks = 0
def check(label, resp):
    global leaks
    st, d, dt = resp
    leak = b"SECRETB" in d
    leaks += leak
    print("%-44s %s %s %s" % (label, st, "LEAK" if leak else "", d[:100]))
for sub in ("", "/items", "/toc", "/content", "/chunks/" + cid):
    check("GET documents/B" + sub, r.req("GET", "/v1/documents/%s%s" % (did, sub), k=A))
check("GET documents/A/chunks/B-chunk", r.req("GET", "/v1/documents/%s/chunks/%s" % (mydoc, cid), k=A))
check("DELETE documents/B", r.req("DELETE", "/v1/documents/" + did, k=A))
check("search scoped to B doc", r.req("POST", "/v1/search", {"query": "SECRETB revenue", "document_ids": [did]}, k=A))
check("search SECRETB", r.req("POST", "/v1/search", {"query": "SECRETB revenue victim"}, k=A))
check("execution scoped to B doc", r.execute("print(await list_documents())", k=A, document_ids=[did]) and r.req("POST", "/v1/executions", {"code": "print(await list_documents())", "document_ids": [did]}, k=A))
check("execution reads /documents/B", r.req("POST", "/v1/executions", {"code": "from pathlib import Path\nprint(Path('/documents/%s/content.txt').read_text())" % did}, k=A))
check("GET analyses/B", r.req("GET", "/v1/analyses/" + aid, k=A))
check("GET analyses/B/events", r.req("GET", "/v1/analyses/%s/events" % aid, k=A))
check("POST analyses/B/replay", r.req("POST", "/v1/analyses/%s/replay" % aid, k=A))
check("analysis scoped to B doc", r.req("POST", "/v1/analyses", {"question": "x", "document_ids": [did]}, k=A))
check("analysis preload B doc", r.req("POST", "/v1/analyses", {"question": "x", "preload": [did]}, k=A))
check("chat completion scoped to B doc", r.req("POST", "/v1/chat/completions", {"model": "quarry", "messages": [{"role": "user", "content": "x"}], "document_ids": [did]}, k=A))
check("GET analyses list (A)", r.req("GET", "/v1/analyses?limit=100", k=A))
# MCP: B opens a session; A uses it
h = {"Accept": "application/json, text/event-stream"}
init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "rt5", "version": "1"}}}
c = r.http.client.HTTPConnection(r.HOST, r.PORT, timeout=60)
c.request("POST", "/mcp", body=json.dumps(init), headers=dict(h, **{"Authorization": "Bearer " + B, "Content-Type": "application/json"}))
resp = c.getresponse(); sid = resp.getheader("Mcp-Session-Id"); resp.read(); c.close()
call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read_document", "arguments": {"document_id": did}}}
check("MCP: A's key on B's session", r.req("POST", "/mcp", call, headers=dict(h, **{"Mcp-Session-Id": sid}), k=A))
c = r.http.client.HTTPConnection(r.HOST, r.PORT, timeout=60)
c.request("POST", "/mcp", body=json.dumps(init), headers=dict(h, **{"Authorization": "Bearer " + A, "Content-Type": "application/json"}))
resp = c.getresponse(); sidA = resp.getheader("Mcp-Session-Id"); resp.read(); c.close()
r.req("POST", "/mcp", {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=dict(h, **{"Mcp-Session-Id": sidA}), k=A)
check("MCP: A reads B's document", r.req("POST", "/mcp", call, headers=dict(h, **{"Mcp-Session-Id": sidA}), k=A))
call2 = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "SECRETB", "document_ids": [did]}}}
check("MCP: A searches scoped to B doc", r.req("POST", "/mcp", call2, headers=dict(h, **{"Mcp-Session-Id": sidA}), k=A))
check("MCP: DELETE B's session with A's key", r.req("DELETE", "/mcp", headers={"Mcp-Session-Id": sid}, k=A))
print("leaks:", leaks)
