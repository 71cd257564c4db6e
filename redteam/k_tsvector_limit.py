"""F8: a chunk is indexed as to_tsvector(context || ' ' || content) in a trigger (V10), and a tsvector
holds at most 1 MB. A title (the `title` field, or the document's own: a Markdown '# ' line, an HTML
<title>) or a heading path (F1) of ~150,000 distinct words makes that statement fail:
"string is too long for tsvector" (54000), and the ingest answers 500."""
import random, string
from rt import *

random.seed(11)
title = " ".join("".join(random.choice(string.ascii_lowercase) for _ in range(8)) for _ in range(150_000))
show("json title of 150k distinct words", ingest_json("a short body about tsvector limits", uri="tsv.txt", title=title))
