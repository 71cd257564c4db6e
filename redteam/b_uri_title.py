"""F2: `uri` (and `title`) have no length bound.
(a) a uri of 3,000+ incompressible characters: the UNIQUE (tenant_id, uri) btree refuses the row
    ("index row size ... exceeds btree version 4 maximum 2704") and the gateway answers 500.
(b) the multipart form's uri field (Netty's 8 KiB form attribute limit) reaches it too.
(c) a title of 1,000,000 characters is stored, returned in every search hit, and copied into every
    chunk's `context` column."""
import json, random, string, sys
from rt import *

random.seed(7)
def rnd(n):
    return "".join(random.choice(string.ascii_letters + string.digits) for _ in range(n))

show("json uri 3000 random chars", ingest_json("hello uri world one", uri="docs/" + rnd(3000) + ".txt"))
show("multipart uri 6000 random chars", upload("u.txt", b"hello uri world two", uri="docs/" + rnd(6000) + ".txt", ctype="text/plain"))
r = show("json title 1,000,000 chars", ingest_json("\n\n".join("zeppelin paragraph %d" % i for i in range(40)), uri="t.txt", title="T" + rnd(999_999)))
s = show("search", req("POST", "/v1/search", {"query": "zeppelin paragraph", "limit": 20}), 80)
print("  search response bytes:", len(s[1]))
