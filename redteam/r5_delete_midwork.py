"""Tenant deletion while its work is under way (gateway on RT_PORT): a fresh tenant ingests a
~1.5 MB text (hundreds of chunks to embed), runs a 60 s execution, holds a streamed analysis, and
has searched once (its copies building); the admin deletes it a few seconds in. Then: what each
request got, rows left with its id in every tenant table, its documents dir, its containers, and
whether its key still works."""
import json, os, random, subprocess, threading, time
import r5_rt as r
tid, key = r.new_tenant("r5del")
random.seed(5)
words = [("".join(random.choice("abcdefghijklmnop") for _ in range(random.randint(3, 9)))) for _ in range(5000)]
small = " ".join(random.choice(words) for _ in range(2000))
for i in range(3):
    r.ingest(small + " doc%d" % i, uri="small%d.txt" % i, k=key)
r.req("POST", "/v1/search", {"query": "abc def"}, k=key)
big = "\n\n".join(" ".join(random.choice(words) for _ in range(120)) for _ in range(2000))
out = {}
def ingest():
    out["ingest"] = r.req("POST", "/v1/documents", {"content": big, "uri": "big.txt"}, k=key, timeout=600)[:2]
def execute():
    out["execute"] = r.req("POST", "/v1/executions", {"code": "await list_documents()\nwhile True:\n    pass", "limits": {"wall_time_ms": 60000}}, k=key)[:2]
def analysis():
    out["analysis"] = r.req("POST", "/v1/analyses", {"question": "q <<CELL>>print(1)<</CELL>><<CELL>>SLEEP 20<</CELL>>"}, k=key, timeout=120)[:2]
ts = [threading.Thread(target=f) for f in (ingest, execute, analysis)]
[t.start() for t in ts]
time.sleep(6)
t0 = time.time()
st, d, _ = r.admin("DELETE", "/v1/admin/tenants/" + tid)
print("DELETE tenant:", st, d[:200], "%.1fs" % (time.time() - t0))
[t.join() for t in ts]
for k2, v in out.items():
    print("%-9s %s %s" % (k2, v[0], v[1][:250]))
time.sleep(3)
tables = subprocess.run(["psql", "-h", "127.0.0.1", "-U", "quarry", "-d", "quarry_redteam5", "-Atc",
    "select table_name from information_schema.columns where column_name='tenant_id' and table_schema='public'"],
    capture_output=True, text=True, env=dict(os.environ, PGPASSWORD="quarry")).stdout.split()
q = "set quarry.all_tenants=on; " + " union all ".join("select '%s', count(*) from %s where tenant_id='%s'" % (t, t, tid) for t in tables)
rows = subprocess.run(["psql", "-h", "127.0.0.1", "-U", "quarry", "-d", "quarry_redteam5", "-Atc", q], capture_output=True, text=True, env=dict(os.environ, PGPASSWORD="quarry")).stdout.split()
print("rows left:", [x for x in rows if not x.endswith("|0") and x != "SET"] or "none")
dirs = [d for d in os.listdir(r.VAR) if d.startswith("data-")]
print("documents dirs left:", [os.path.join(d, "documents", tid) for d in dirs if os.path.exists(os.path.join(r.VAR, d, "documents", tid))] or "none")
print("containers left:", r.containers(tid) or "none")
print("key after delete:", r.req("GET", "/v1/documents", k=key)[0])
