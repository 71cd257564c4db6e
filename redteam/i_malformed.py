"""Malformed and edge-case bodies against ingest and search; prints any 5xx."""
import json
from rt import *

J = {"Content-Type": "application/json"}
cases = [
    ("search lone surrogate", "POST", "/v1/search", '{"query": "\\ud800 ferry"}', J),
    ("search limit 1e400", "POST", "/v1/search", '{"query": "ferry", "limit": 1e400}', J),
    ("search limit 2^70", "POST", "/v1/search", '{"query": "ferry", "limit": 1180591620717411303424}', J),
    ("search limit -1", "POST", "/v1/search", '{"query": "ferry", "limit": -1}', J),
    ("search only punctuation", "POST", "/v1/search", '{"query": "!!! ??? ..."}', J),
    ("search only stopwords", "POST", "/v1/search", '{"query": "the and of"}', J),
    ("search tsquery syntax", "POST", "/v1/search", '{"query": "a & !b | (c <-> d):*"}', J),
    ("search 4000 distinct", "POST", "/v1/search", json.dumps({"query": " ".join("w%d" % i for i in range(700))[:4000]}), J),
    ("search long word", "POST", "/v1/search", json.dumps({"query": "x" * 3999}), J),
    ("search long unicode word", "POST", "/v1/search", json.dumps({"query": "\u00e9" * 3999}), J),
    ("search emoji query", "POST", "/v1/search", json.dumps({"query": "\U0001F600" * 1999}), J),
    ("search dup doc ids", "POST", "/v1/search", json.dumps({"query": "x", "document_ids": ["00000000-0000-0000-0000-000000000001"] * 2}), J),
    ("search nested 5000", "POST", "/v1/search", '{"query": "x", "z": ' + "[" * 5000 + "]" * 5000 + "}", J),
    ("search BOM", "POST", "/v1/search", b'\xef\xbb\xbf{"query": "x"}', J),
    ("search latin1 body", "POST", "/v1/search", b'{"query": "caf\xe9"}', J),
    ("search charset utf-16", "POST", "/v1/search", '{"query": "x"}'.encode("utf-16"), {"Content-Type": "application/json; charset=utf-16"}),
    ("ingest json lone surrogate", "POST", "/v1/documents", '{"content": "hello \\udc00 world", "uri": "ls.txt"}', J),
    ("ingest json content_type pdf", "POST", "/v1/documents", '{"content": "hello world", "content_type": "application/pdf"}', J),
    ("ingest json docling deep", "POST", "/v1/documents", json.dumps({"content": '{"schema_name":"DoclingDocument","body":' + "[" * 3000 + "]" * 3000 + "}", "uri": "deep.json"}), J),
    ("ingest json uri with NUL esc", "POST", "/v1/documents", '{"content": "hi there", "uri": "a\\u0000b"}', J),
    ("ingest json title only spaces", "POST", "/v1/documents", '{"content": "hi there title", "title": "   "}', J),
    ("ingest json uri control chars", "POST", "/v1/documents", '{"content": "hi control", "uri": "a\\u0001\\u001b[31mb"}', J),
    ("ingest text/markdown giant heading", "POST", "/v1/documents", json.dumps({"content": "## " + "h" * 300000, "uri": "gh.md", "content_type": "text/markdown"}), J),
    ("ingest html deep nesting", "POST", "/v1/documents", json.dumps({"content": "<html><body>" + "<div>" * 100000 + "deep" + "</div>" * 100000, "uri": "deep.html"}), J),
    ("ingest html deep lists", "POST", "/v1/documents", json.dumps({"content": "<html><body>" + "<ul><li>x" * 20000, "uri": "deeplist.html"}), J),
    ("ingest md deep quotes", "POST", "/v1/documents", json.dumps({"content": ">" * 50000 + " quote", "uri": "deepq.md"}), J),
    ("ingest md deep lists", "POST", "/v1/documents", json.dumps({"content": "".join("  " * i + "- item %d\n" % i for i in range(3000)), "uri": "deepl.md"}), J),
    ("ingest md deep brackets", "POST", "/v1/documents", json.dumps({"content": "[" * 100000 + "x" + "](" * 100000, "uri": "brk.md"}), J),
]
for label, m, p, b, h in cases:
    r = req(m, p, b, h)
    show(label, r, 200)
