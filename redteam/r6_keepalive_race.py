"""Probe: a kept-alive connection reused near QUARRY_HTTP_IDLE_SECONDS. The guard closes it from a
timer (ConnectionGuard.sweep, on another thread than the connection's) without telling clients the
limit (no Keep-Alive: timeout=...). Each of THREADS clients sends POST /v1/documents (a unique uri)
on one connection, waits a random gap around the idle limit, and sends again; then compares what
the clients were told with what the tenant holds.
    THREADS=20 ROUNDS=4 IDLE=5 python3 r6_keepalive_race.py
"""
import http.client, json, os, random, threading, time, uuid
import r6_rt as rt

THREADS = int(os.environ.get("THREADS", "20")); ROUNDS = int(os.environ.get("ROUNDS", "4"))
IDLE = float(os.environ.get("IDLE", "5"))
tid, k = rt.new_tenant("r6ka")
told = {"answered": 0, "no answer": 0, "refused at send": 0}
sent_no_answer = []
lock = threading.Lock()

def client(i):
    c = http.client.HTTPConnection(rt.HOST, rt.PORT, timeout=30)
    for r in range(ROUNDS):
        uri = "ka-%d-%d-%s" % (i, r, uuid.uuid4().hex[:6])
        body = json.dumps({"content": "keep-alive probe %s" % uri, "uri": uri})
        try:
            c.request("POST", "/v1/documents", body=body, headers={"Authorization": "Bearer " + k, "Content-Type": "application/json"})
        except OSError:
            with lock: told["refused at send"] += 1
            c.close(); c = http.client.HTTPConnection(rt.HOST, rt.PORT, timeout=30); continue
        try:
            resp = c.getresponse(); resp.read()
            with lock: told["answered"] += 1
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, http.client.BadStatusLine):
            with lock:
                told["no answer"] += 1; sent_no_answer.append(uri)
            c.close(); c = http.client.HTTPConnection(rt.HOST, rt.PORT, timeout=30)
        time.sleep(random.uniform(IDLE - 0.5, IDLE + 1.5))
    c.close()

ts = [threading.Thread(target=client, args=(i,)) for i in range(THREADS)]
[t.start() for t in ts]; [t.join() for t in ts]
time.sleep(1)
st, data, _ = rt.req("GET", "/v1/documents?limit=200", k=k)
stored = {d["uri"] for d in json.loads(data)["documents"]}
print("clients were told:", told)
print("sent but not answered: %d; of those stored anyway: %d" % (len(sent_no_answer), sum(u in stored for u in sent_no_answer)))
rt.admin("DELETE", "/v1/admin/tenants/" + tid)
