"""F4c: a DoclingDocument picture's `captions` are references resolved without the walker's
seen-set, so one caption text can be referenced any number of times; the picture item's text is the
caption repeated that many times (DoclingJsonConverter.captions). REFS references (~25 bytes each) to
one caption of CAPTION characters: REFS x CAPTION characters of item text."""
import json, os, random
from rt import *
refs, cap = int(os.environ.get("REFS", "3")), int(os.environ.get("CAPTION", "100000"))
random.seed(4)
caption = " ".join(random.choice(["gull", "tern", "skua", "puffin", "gannet"]) for _ in range(cap // 5))[:cap]
doc = {"schema_name": "DoclingDocument", "version": "1.0.0", "name": "captions",
       "body": {"self_ref": "#/body", "children": [{"$ref": "#/pictures/0"}]},
       "texts": [{"self_ref": "#/texts/0", "label": "caption", "text": caption}],
       "pictures": [{"self_ref": "#/pictures/0", "label": "picture", "captions": [{"$ref": "#/texts/0"}] * refs}],
       "tables": [], "groups": []}
src = json.dumps(doc).encode()
print("source bytes:", len(src), "expected item text:", refs * (cap + 1))
r = show("picture with %d caption refs" % refs, upload("captions-%d.json" % refs, src, ctype="application/json", timeout=900), 300)
if r[0] < 300:
    d = json.loads(r[1])
    items = req("GET", "/v1/documents/%s/items" % d["id"])[1].decode().splitlines()
    print("  items: %d, characters of item text: %d" % (len(items), sum(len(json.loads(l)["text"]) for l in items)))
