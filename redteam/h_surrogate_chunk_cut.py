"""F7: Chunker.longText cuts a paragraph without whitespace at exactly `room` characters, inside a
surrogate pair when one straddles the cut (ItemBounds guards its own cuts, the chunker does not).
The chunk then holds a lone surrogate, which the PostgreSQL client encodes as '?': the stored chunk
text (/chunks/{id}, what was embedded and indexed) differs from the item text it came from."""
import json
from rt import *

text = "x" + "\U0001F600" * 3000          # U+1F600 is two UTF-16 units; the cut at 1500 splits one
r = show("ingest", ingest_json(text, uri="surrogates.txt"))
d = json.loads(r[1])
s = json.loads(req("POST", "/v1/search", {"query": "x", "limit": 10, "document_ids": [d["id"]]})[1])
for h in s["results"][:1]:
    pass
# walk the chunks through search by document (all chunks of the document)
seen = 0
items = req("GET", "/v1/documents/%s/items" % d["id"])[1].decode()
print("items contain '?':", "?" in items)
hits = json.loads(req("POST", "/v1/search", {"query": "\U0001F600", "limit": 100, "document_ids": [d["id"]]})[1])["results"]
for h in hits:
    c = json.loads(req("GET", "/v1/documents/%s/chunks/%s" % (d["id"], h["chunk_id"]))[1])
    q = c["content"].count("?")
    print("chunk %s: %d chars, '?' at %s" % (h["chunk_id"][:8], len(c["content"]), [i for i, ch in enumerate(c["content"]) if ch == "?"][:4]))
