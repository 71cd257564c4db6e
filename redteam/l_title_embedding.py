"""F9: the document's title (the `title` field, or the document's own: a Markdown '# ' line, an HTML
<title>, docling's name; none of them bounded by ItemBounds) is the `context` of every chunk: it is
stored again in every chunk row and prepended to every chunk's text before embedding
(Chunk.embeddedText). The tokenizer reads the whole passage before truncating it to 512 tokens, so
an ingest costs (chunks x title length): TITLE=500000, CHUNKS=10 takes ~30 s here; a Markdown file of
'# ' + 1.35M characters (its title item cut by ItemBounds into 14 pieces, ~900 chunks, each embedded
with the 1.35M-character title in front) ran for over 10 minutes of both embedding threads before we
restarted the gateway (jstack: onnx-embed-1/2 in HuggingFaceTokenizer.encode)."""
import os, random, string, time
from rt import *

t, chunks = int(os.environ.get("TITLE", "500000")), int(os.environ.get("CHUNKS", "10"))
random.seed(5)
body = "\n\n".join("Section %d of %d. " % (i, t) + " ".join(random.choice(["ferry", "harbour", "winter", "route", "tide"]) for _ in range(250)) for i in range(chunks))
show("title %d chars, ~%d chunks" % (t, chunks), ingest_json(body, uri="ctx-%d.txt" % t, title=" ".join(random.choice(["north", "south", "quay", "pier", "buoy", "gale"]) + str(i % 97) for i in range(t // 7))[:t], timeout=900), 200)
show("same, short title", ingest_json(body + " again", uri="ctx-short.txt", title="Short title", timeout=900), 200)
