"""Cross-tenant probes: tenant 2 asks for tenant 1's document, items, toc, content, chunk and searches
scoped to it; the answers must be the same as for a missing id."""
import json, uuid
from rt import *

r = ingest_json("The cobalt albatross nests on the northern pier.", uri="secret-%s.txt" % uuid.uuid4().hex)
d = json.loads(r[1])
s = json.loads(req("POST", "/v1/search", {"query": "cobalt albatross", "limit": 1, "document_ids": [d["id"]]})[1])["results"][0]
missing = str(uuid.uuid4())
for path in ["/v1/documents/%s", "/v1/documents/%s/items", "/v1/documents/%s/toc", "/v1/documents/%s/content",
             "/v1/documents/%s/chunks/" + s["chunk_id"]]:
    a = req("GET", path % d["id"], k=key(2))
    b = req("GET", path % missing, k=key(2))
    same = a[0] == b[0] and a[1].replace(d["id"].encode(), b"X") == b[1].replace(missing.encode(), b"X")
    print("%-40s other=%d missing=%d same-bytes=%s" % (path, a[0], b[0], same))
for body in ({"query": "cobalt albatross", "document_ids": [d["id"]]}, {"query": "cobalt albatross"}):
    a = req("POST", "/v1/search", body, k=key(2))
    print("search as tenant 2", body.get("document_ids") and "scoped" or "all", a[0], a[1][:120])
print("delete as tenant 2:", req("DELETE", "/v1/documents/" + d["id"], k=key(2))[0], "still there for tenant 1:", req("GET", "/v1/documents/" + d["id"])[0])
