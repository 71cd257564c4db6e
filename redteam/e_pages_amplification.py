"""F5: a DoclingDocument item's `prov` may list any number of pages, and that list is copied to every
ItemBounds piece and every chunk cut from the item (Chunker.add), then encoded into the chunks' JSON
rows on the event loop (IngestService.insertItemsAndChunks) and returned with every search hit.
PAGES distinct pages on one text item of TEXT characters: rows hold TEXT/1500 * PAGES integers."""
import json, os, random, sys
from rt import *

pages, chars = int(os.environ.get("PAGES", "20000")), int(os.environ.get("TEXT", "1000000"))
random.seed(3)
words = "harbour ferry timetable winter schedule route vessel crossing passenger freight".split()
text = []
n = 0
while n < chars:
    w = random.choice(words); text.append(w); n += len(w) + 1
doc = {"schema_name": "DoclingDocument", "version": "1.0.0", "name": "pages",
       "body": {"self_ref": "#/body", "children": [{"$ref": "#/texts/0"}]},
       "texts": [{"self_ref": "#/texts/0", "label": "text", "text": " ".join(text),
                  "prov": [{"page_no": p} for p in range(1, pages + 1)]}],
       "tables": [], "groups": [], "pictures": []}
src = json.dumps(doc).encode()
print("source bytes:", len(src))
r = show("docling %d pages x %d chars" % (pages, chars), upload("pages-%d.json" % pages, src, ctype="application/json", timeout=1800), 300)
if r[0] < 300:
    s = show("search", req("POST", "/v1/search", {"query": "ferry timetable winter", "limit": 10}), 100)
    print("  page_numbers per hit:", [len(h["page_numbers"]) for h in json.loads(s[1])["results"]])
