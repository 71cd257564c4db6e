"""R5: callback events are recorded before any check: a refused or over-budget search()/llm() call
still stores its whole arguments (up to the runner's 1,000,000 characters) as a `callback` event,
held in the live analysis' memory (LiveAnalysis.events) and written to analysis_events.
Needs the gateway pointed at r5_model.py. Env: N (calls, default 200), CHARS (query size, 900000).
Prints calls made by the cell, seconds, the stored events' count and bytes, the gateway's heap."""
import json, os, subprocess, time
import r5_rt as r

N = int(os.environ.get("N", "200")); CHARS = int(os.environ.get("CHARS", "900000"))
cell = f"""
q = 'a ' * {CHARS // 2}
n = 0
for i in range({N}):
    try:
        await search(q)
    except Exception as e:
        last = repr(e)[:120]
    n += 1
print(n, last)
"""
t0 = time.time()
st, data, dt = r.req("POST", "/v1/analyses", {"question": "go <<CELL>>" + cell + "<</CELL>>",
                                               "budgets": {"wall_time_ms": 120000}})
a = json.loads(data)
print("status", st, a.get("status"), "%.1fs" % dt, "stdout:", a["steps"][0]["result"]["stdout"][:200] if a.get("steps") else a.get("error"))
out = subprocess.run(["psql", "-h", "127.0.0.1", "-U", "quarry", "-d", "quarry_redteam5", "-Atc",
    "set quarry.all_tenants=on; select count(*), sum(octet_length(body)) from analysis_events where analysis_id='%s' and type='callback'" % a["id"]],
    capture_output=True, text=True, env=dict(os.environ, PGPASSWORD="quarry"))
print("callback events (count|bytes):", out.stdout.strip(), out.stderr.strip()[:200])
pid = open(os.path.join(r.VAR, "18580.pid")).read().strip()
print(subprocess.run(["bash", "-c", f"$(/work/main/scripts/setup.sh --print-java-home)/bin/jcmd {pid} GC.heap_info | head -3"],
                     capture_output=True, text=True).stdout)
