"""R5-3 (harness gateway, RT_PORT=18581): code that has left the language sends FileRead messages
for N distinct made-up document ids. Each becomes a citation entry in the gateway's memory
(agent/Citations.fileRead, no bound), looked up in one query at the end and stored in the
analysis' record. Env N (default 200000)."""
import json, os, time
import r5_rt as r
N = int(os.environ.get("N", "200000"))
raw = f"""#RAW
import uuid
for i in range({N}):
    session._send(file_read=pb.FileRead(cell_id=cell_id, path='/documents/%s/content.txt' % uuid.uuid4()))
"""
st, data, dt = r.req("POST", "/v1/analyses", {"question": "go <<CELL>>" + raw + "<</CELL>>"}, timeout=600)
a = json.loads(data) if data[:1] == b"{" else {}
print("analysis:", st, a.get("status"), a.get("error"), "%.1fs" % dt, "response bytes", len(data),
      "citations", len(a.get("citations") or []))
t0 = time.time()
st, data, dt = r.req("GET", "/v1/analyses?limit=5", timeout=600)
print("list analyses:", st, len(data), "bytes %.1fs" % dt)
