"""R5-1 end to end: one analysis whose cells call search() with a 900,000-character query in a loop
(each call refused, most over budget) until their wall time; CELLS cells (default 3). Every call is
kept as a `callback` event in the gateway's heap for the analysis' life. Watch the gateway's log for
OutOfMemoryError and r5_probe.py (another tenant) for failures."""
import json, os, time
import r5_rt as r
cells = int(os.environ.get("CELLS", "3"))
cell = "q = 'a ' * 450000\nwhile True:\n    try:\n        await search(q)\n    except Exception as e:\n        pass\n"
q = "go " + "".join("<<CELL>>%s<</CELL>>" % cell for _ in range(cells))
t0 = time.time()
try:
    st, data, dt = r.req("POST", "/v1/analyses", {"question": q, "budgets": {"wall_time_ms": 600000}}, timeout=900)
    a = json.loads(data) if data[:1] == b"{" else {}
    print("status", st, a.get("status"), a.get("error"), "%.1fs" % dt, data[:300] if st != 200 else "")
except Exception as e:
    print("request failed after %.1fs: %r" % (time.time() - t0, e))
