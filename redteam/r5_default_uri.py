"""R5-9: a JSON ingest without `uri` takes its title as the uri, or "content" without one, so two
different documents sent that way replace each other (same id, version bumped)."""
import json, uuid
import r5_rt as r
tid, key = r.new_tenant("r5uri")
a = r.ingest("first document, about apples %s" % uuid.uuid4(), k=key)
b = r.ingest("second document, about pears %s" % uuid.uuid4(), k=key)
print("no uri, no title:", a["id"], a["status"], "->", b["id"], b["status"])
c = r.ingest("Q1 figures %s" % uuid.uuid4(), title="Quarterly report", k=key)
d = r.ingest("Q2 figures %s" % uuid.uuid4(), title="Quarterly report", k=key)
print("same title:", c["id"], c["status"], "->", d["id"], d["status"])
docs = json.loads(r.req("GET", "/v1/documents", k=key)[1])["documents"]
print("documents the tenant has:", [(x["uri"], x["version"]) for x in docs])
r.admin("DELETE", "/v1/admin/tenants/" + tid)
