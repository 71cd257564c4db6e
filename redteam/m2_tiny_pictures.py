"""F10b (see F10): items without text cost no embedding, so the item count is reached at once: HTML with N
bare <img> tags (5 bytes each) gives N `picture` items. Every item becomes a JsonObject, then one JSON
string for INSERT_ITEMS, built on the event loop (IngestService.insertItemsAndChunks)."""
import json, os
from rt import *
n = int(os.environ.get("N", "1000000"))
src = b"<html><body><p>pictures %d</p>" % n + b"<img>" * n + b"</body></html>"
print("source bytes:", len(src))
r = show("html %d <img>" % n, upload("img-%d.html" % n, src, ctype="text/html", timeout=900), 300)
