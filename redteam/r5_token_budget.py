"""R5-8: an analysis' token budget is not checked inside a cell: llm() calls go on after the
budget is spent (only their number is budgeted), up to the tenant's daily quota. A fresh tenant;
the scripted model reports prompt tokens as its prompt's length / 4 (a real endpoint counts them).
Budget: tokens 5000; the cell makes 12 llm() calls of 400,000 characters (~100,000 tokens each)."""
import json
import r5_rt as r
tid, key = r.new_tenant("r5tok")
cell = "n = 0\nfor i in range(12):\n    try:\n        await llm('x ' * 200000)\n        n += 1\n    except Exception as e:\n        print(i, repr(e)[:150])\nprint('llm calls that returned:', n)\n"
st, d, dt = r.req("POST", "/v1/analyses", {"question": "go <<CELL>>" + cell + "<</CELL>>", "budgets": {"tokens": 5000}}, k=key, timeout=300)
a = json.loads(d)
print(st, a["status"], a.get("error"), "usage:", a["usage"])
print("cell result:", json.dumps(a["steps"][0]["result"])[:700] if a.get("steps") else "")
st, d, _ = r.req("POST", "/v1/analyses", {"question": "again <<CELL>>print(1)<</CELL>>"}, k=key)
print("next analysis of the tenant:", st, d[:200])
