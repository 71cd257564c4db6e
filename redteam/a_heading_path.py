"""F1: a chunk's heading path is not bounded. Markdown with 5 nested headings of ~99,000 characters
each (every item within ItemBounds' 100,000) gives chunks whose content and `headings` carry all five:
/v1/documents/{id}/chunks/{chunk} and search hits come back with ~500,000 characters per chunk.
With AMPLIFY=n, n short paragraphs follow; each chunk gets ~200 characters of body and the whole
500,000-character prefix again (Chunker.longText/run with room = max(200, 1500 - prefix))."""
import json, os, random, sys
from rt import *

random.seed(1)
words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
def heading_text(n, tag):
    out, size = [], 0
    while size < n:
        w = random.choice(words) + str(random.randint(0, 99))
        out.append(w); size += len(w) + 1
    return tag + " " + " ".join(out)[: n - len(tag) - 1]

amplify = int(os.environ.get("AMPLIFY", "1"))
md = []
for level in range(2, 7):
    md.append("#" * level + " " + heading_text(99_000, "level%d" % level))
for i in range(amplify):
    md.append("Paragraph %d about the quarterly ferry timetable and zebra crossings." % i)
src = ("\n\n".join(md) + "\n").encode()
print("source bytes:", len(src))
r = show("ingest", upload("nested.md", src, uri="nested-%d.md" % amplify, ctype="text/markdown"))
if r[0] >= 300:
    sys.exit(0)
doc = json.loads(r[1])
items = req("GET", "/v1/documents/%s/items" % doc["id"])
longest = max(len(json.loads(l)["text"]) for l in items[1].decode().splitlines())
print("longest item text:", longest)
s = show("search", req("POST", "/v1/search", {"query": "quarterly ferry timetable zebra", "limit": 10}))
hits = json.loads(s[1])["results"]
for h in hits[:3]:
    print("  hit content %d chars, headings %d chars total" % (len(h["content"]), sum(map(len, h["headings"]))))
    c = req("GET", "/v1/documents/%s/chunks/%s" % (h["document_id"], h["chunk_id"]))
    cj = json.loads(c[1])
    print("  /chunks/%s -> %s, content %d chars (bound is 100,000)" % (h["chunk_id"], c[0], len(cj["content"])))
