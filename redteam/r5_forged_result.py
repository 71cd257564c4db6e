"""R5-2 (needs the harness gateway, RT_PORT=18581): code that has left the language forges its
cell's CellResult with a 15 MB value_repr and 15 MB error message/traceback: the gateway appends
value_repr to stdout without the output limit (GrpcSandboxSession.finish -> Cell.appendUnlimited)
and takes error fields whole. Shown for an execution (max_output_chars 100) and an analysis
(stored as a step, output and cell_result events, and sent to the model as the tool result)."""
import json, os, subprocess
import r5_rt as r
SIZE = int(os.environ.get("SIZE", "15000000"))
raw = f"""#RAW
session._send(result=pb.CellResult(cell_id=cell_id, status=pb.CELL_STATUS_ERROR, error_type='E',
    error_message='m' * {SIZE // 3}, traceback='t' * {SIZE // 3}, value_repr='v' * {SIZE // 3}))
"""
st, res, dt = r.execute(raw, limits={"max_output_chars": 100})
L = lambda v: len(v) if isinstance(v, str) else v
if isinstance(res, dict):
    e = res.get("error") or {}
    print("execution:", st, "%.1fs" % dt, "stdout chars", len(res["stdout"]), "error.message chars", L(e.get("message")),
          "traceback chars", L(e.get("traceback")), "truncated", res.get("truncated"))
else:
    print("execution:", st, res[:200])
st, data, dt = r.req("POST", "/v1/analyses", {"question": "go <<CELL>>" + raw + "<</CELL>>"}, timeout=300)
a = json.loads(data)
print("analysis:", st, a.get("status"), "%.1fs" % dt, "response bytes", len(data))
out = subprocess.run(["psql", "-h", "127.0.0.1", "-U", "quarry", "-d", "quarry_redteam5", "-Atc",
    "set quarry.all_tenants=on; select type, count(*), sum(octet_length(body)) from analysis_events where analysis_id='%s' group by 1" % a["id"]],
    capture_output=True, text=True, env=dict(os.environ, PGPASSWORD="quarry"))
print(out.stdout.strip())
