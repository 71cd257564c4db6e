"""F6: a DoclingDocument item's `self_ref` ("#/texts/" followed by any number of leading zeros, all
resolving to index 0) and its `label` (any string) are stored unbounded, copied to every piece and
every chunk (doc_item_refs, labels), and returned by /items, /chunks and search hits."""
import json, os, sys
from rt import *

n = int(os.environ.get("N", "300000"))
ref = "#/texts/" + "0" * n
doc = {"schema_name": "DoclingDocument", "version": "1.0.0", "name": "refs",
       "body": {"self_ref": "#/body", "children": [{"$ref": ref}]},
       "texts": [{"self_ref": ref, "label": "L" * n, "text": " ".join(["marmalade orchard ledger"] * 400)}],
       "tables": [], "groups": [], "pictures": []}
src = json.dumps(doc).encode()
print("source bytes:", len(src))
r = show("docling self_ref/label %d chars" % n, upload("refs-%d.json" % n, src, ctype="application/json"), 200)
if r[0] < 300:
    d = json.loads(r[1])
    it = show("items", req("GET", "/v1/documents/%s/items" % d["id"]), 80)
    s = show("search", req("POST", "/v1/search", {"query": "marmalade orchard ledger", "limit": 10}), 80)
    h = json.loads(s[1])["results"][0]
    print("  hit doc_item_refs chars:", sum(map(len, h["doc_item_refs"])), "labels chars:", sum(map(len, h["labels"])))
