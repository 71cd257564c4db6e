"""F13: a document's title and uri are not counted by the stored_bytes quota (byte_size is the
content's bytes) and GET /v1/documents returns every title whole. TITLE characters of title over a
12-byte content: the document counts 12 bytes; the listing answers TITLE characters per document."""
import json, os, random, string, uuid
from rt import *
t = int(os.environ.get("TITLE", "10000000"))
random.seed(13)
title = "".join(random.choice(string.ascii_letters) for _ in range(1000)) * (t // 1000)
u = "quota-%s.txt" % uuid.uuid4().hex[:8]
show("ingest title %d chars, content 12 bytes" % t, ingest_json("tiny content", uri=u, title=title), 100)
r = show("list documents", req("GET", "/v1/documents"), 60)
for d in json.loads(r[1])["documents"]:
    if d["uri"] == u:
        print("  byte_size counted:", d["byte_size"], "title chars stored:", len(d["title"]))
