"""F11: a search hit's context always keeps every item inside its chunk's item range (SearchSql:
`w.side = 0`; ContextExpander keeps the hit's own items), furniture included, while the chunker
packs two short paragraphs into one chunk across any number of page headers between them (it skips
page_header/page_footer items). A DoclingDocument whose body labels its items freely puts N
page_header items of 99,000 characters between two short paragraphs: one search hit's `content`
is then N x 99,000 characters (the context budget is 10,000; the item bound 100,000)."""
import json, os, random
from rt import *

n = int(os.environ.get("N", "30"))
random.seed(9)
def filler(i):
    s = "header %d " % i
    while len(s) < 99_000:
        s += random.choice(["quay", "pier", "buoy", "gale", "tide"]) + " "
    return s[:99_000]
texts = [{"self_ref": "#/texts/0", "label": "text", "text": "The obsidian lighthouse opens at dawn."}]
for i in range(1, n + 1):
    texts.append({"self_ref": "#/texts/%d" % i, "label": "page_header", "text": filler(i)})
texts.append({"self_ref": "#/texts/%d" % (n + 1), "label": "text", "text": "The obsidian lighthouse closes at dusk."})
doc = {"schema_name": "DoclingDocument", "version": "1.0.0", "name": "furniture",
       "body": {"self_ref": "#/body", "children": [{"$ref": t["self_ref"]} for t in texts]},
       "texts": texts, "tables": [], "groups": [], "pictures": []}
src = json.dumps(doc).encode()
print("source bytes:", len(src))
r = show("ingest", upload("furniture-%d.json" % n, src, ctype="application/json"), 200)
s = show("search", req("POST", "/v1/search", {"query": "obsidian lighthouse dawn dusk", "limit": 1}), 120)
h = json.loads(s[1])["results"][0]
print("  one hit: content %d chars (items bound 100,000; context budget 10,000)" % len(h["content"]))
