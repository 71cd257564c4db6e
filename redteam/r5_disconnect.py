"""Clients that go away: chat completions (streamed and not), a streamed analysis and a streamed
execution are dropped mid-way, repeatedly; then checks that the tenant's places came back (4
analyses start at once), no sandbox container of the tenant is left, and each dropped analysis
recorded an end. Gateway on RT_PORT with the scripted model."""
import json, socket, subprocess, time
import r5_rt as r
tid = json.load(open(r.VAR + "/key.json"))["id"]

def drop(path, body, after):
    s = socket.create_connection((r.HOST, r.PORT))
    data = json.dumps(body).encode()
    s.sendall(("POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nAccept: text/event-stream\r\n\r\n" % (path, r.key(), len(data))).encode() + data)
    time.sleep(after)
    s.close()

slow = "q <<CELL>>import math\nprint(1)<</CELL>><<CELL>>SLEEP 6<</CELL>><<CELL>>x = 0\nwhile True:\n    x += 1<</CELL>>"
before = time.time()
for i in range(3):
    drop("/v1/chat/completions", {"model": "quarry", "stream": True, "messages": [{"role": "user", "content": slow}]}, 2.5)
    drop("/v1/chat/completions", {"model": "quarry", "messages": [{"role": "user", "content": slow}]}, 2.5)
    drop("/v1/executions", {"code": "while True:\n    print('x' * 1000)", "stream": True}, 1.0)
    drop("/v1/executions", {"code": "while True:\n    pass"}, 1.0)
time.sleep(10)
st, d, _ = r.req("GET", "/v1/analyses?limit=20")
recent = [a for a in json.loads(d)["analyses"] if a["created_at"] >= time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(before - 1))]
print("dropped chat completions:", [(a["status"], (a.get("error") or {}).get("type") if isinstance(a.get("error"), dict) else a.get("error")) for a in recent])
left = subprocess.run(["docker", "ps", "-q", "--filter", "label=quarry.tenant=" + tid, "--filter", "label=quarry.gateway"], capture_output=True, text=True).stdout.split()
print("tenant containers now (warm pool may hold 2):", len(left))
# four analyses at once must be admitted
import threading
res = []
def one():
    res.append(r.req("POST", "/v1/analyses", {"question": "ok <<CELL>>print(2)<</CELL>>"})[0])
ts = [threading.Thread(target=one) for _ in range(4)]; [t.start() for t in ts]; [t.join() for t in ts]
print("4 analyses after the drops:", res)
