"""F10: huge numbers of tiny items. Nothing bounds the number of items: a Markdown file of ITEMS
one-character paragraphs ("a\n\n" each, 3 bytes) becomes ITEMS items, each encoded as a JsonObject
and then one JSON string for INSERT_ITEMS (IngestService.insertItemsAndChunks, on the event loop),
and /items answers all of them in one body. 2,000,000 items (a 6 MB upload, under the 50 MiB limit)
run the gateway (1152m heap, as in k8s) out of memory on the event loop: 500."""
import json, os, time
from rt import *

n = int(os.environ.get("ITEMS", "1000000"))
src = ("x%d\n\n" % n).encode() + b"a\n\n" * n
print("source bytes:", len(src))
r = show("markdown %d tiny paragraphs" % n, upload("tiny-%d.md" % n, src, ctype="text/markdown", timeout=900), 300)
if r[0] < 300:
    d = json.loads(r[1])
    show("items", req("GET", "/v1/documents/%s/items" % d["id"], timeout=600), 80)
