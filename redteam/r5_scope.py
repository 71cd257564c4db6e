"""Scope: an execution and an analysis scoped to one of the tenant's documents look for another
through every way the code has (/documents listing, glob, direct path, list_documents, search)."""
import json, uuid
import r5_rt as r
w = "zq" + uuid.uuid4().hex[:8]
d1 = r.ingest("scoped document about apples %s" % uuid.uuid4(), uri="scope-a-%s.txt" % w)["id"]
d2 = r.ingest("the hidden %s word lives here %s" % (w, uuid.uuid4()), uri="scope-b-%s.txt" % w)["id"]
assert d1 != d2
code = f"""from pathlib import Path
print(sorted(p.name for p in Path('/documents').iterdir()))
print(len(list(Path('/documents').rglob('*'))))
try:
    print(Path('/documents/{d2}/content.txt').read_text())
except Exception as e:
    print('direct', repr(e))
print([d['id'] for d in await list_documents()])
print([h['document_id'] for h in await search('{w}')])
"""
st, res, _ = r.execute(code, document_ids=[d1])
print("execution:", st, res["stdout"] if isinstance(res, dict) else res)
st, d, _ = r.req("POST", "/v1/analyses", {"question": "s <<CELL>>" + code + "<</CELL>>", "document_ids": [d1]})
a = json.loads(d)
out = a["steps"][0]["result"]["stdout"]
print("analysis:", st, out)
print("other document seen:", "the hidden" in res["stdout"] + out)
