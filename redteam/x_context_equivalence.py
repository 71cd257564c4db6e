#!/usr/bin/env python3
"""Context expansion from memory (search/ContextIndex) against the SQL statement (fusedExpanded).

Two gateways on ONE database: A with QUARRY_SEARCH_MEMORY_MB=0 (every hit expanded by SQL), B with
the default (hits expanded from the in-memory copy once it is built). Documents are ingested through
A; every query goes to both and the results are compared field by field (content, doc_item_refs,
page_numbers, labels, headings, title, uri, document_id, chunk ids...; scores within 1e-5).

  x_context_equivalence.py ingest            # new tenant (key in /tmp/ctx5-var/key), ingest files
  x_context_equivalence.py compare [N]       # warm B, then N queries on both (default all)
  x_context_equivalence.py subset [N]        # the first N saved queries again (e.g. after a restart
                                             # of both with QUARRY_CONTEXT_BUDGET_CHARS=400)
  x_context_equivalence.py fresh             # replace, rename, delete a document: B's next search

A difference here is not necessarily ContextIndex's: B also ranks from its term and vector copies.
x_context_equivalence_java/ attributes it (package dev.quarry.search, compiled against the gateway
jar: javac -cp JAR -d C *.java; java -cp JAR:C dev.quarry.search.Harness TENANT 400,10000):
Harness  - every chunk alone and 300 random fused lists, ContextIndex.hits against fusedExpanded;
Harness2 - the saved queries through SearchService with the copies switched on one kind at a time;
Harness3 - vector rankings, pgvector against the copy, with exact-neighbour recall.
Env: CTX_A (8095), CTX_B (8096), CTX_VAR (/tmp/ctx5-var), QUARRY_ADMIN_TOKEN, CTX_DATA (../shared/data).
stdlib only.
"""
import http.client, json, os, random, re, sys, time, uuid

HOST = "127.0.0.1"
A = int(os.environ.get("CTX_A", "8095"))
B = int(os.environ.get("CTX_B", "8096"))
VAR = os.environ.get("CTX_VAR", "/tmp/ctx5-var")
ADMIN = os.environ.get("QUARRY_ADMIN_TOKEN", "ctx5-admin-token-0123456789abcdef")
HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.environ.get("CTX_DATA", os.path.join(HERE, "..", "..", "shared", "data"))
FILES = [
    "docling/pdf/2305.03393v1-pg9.pdf", "docling/pdf/amt_handbook_sample.pdf",
    "docling/pdf/normal_4pages.pdf", "docling/docx/word_sample.docx", "docling/docx/tablecell.docx",
    "docling/html/wiki_duck.html", "docling/html/example_08.html", "docling/md/wiki.md",
    "docling/md/escaped_characters.md", "docling/docling-json/2206.01062.json",
    "filings/pdfs/JOHNSON_JOHNSON_2023_8K_dated-2023-08-30.pdf",
    "filings/pdfs/ULTABEAUTY_2023Q4_EARNINGS.pdf", "filings/pdfs/MGMRESORTS_2022Q4_EARNINGS.pdf",
    "filings/pdfs/Pfizer_2023Q2_10Q.pdf",
]
TOL = 1e-5


def req(port, method, path, body=None, key=None, timeout=900, headers=None, data=None):
    h = dict(headers or {})
    if key:
        h["Authorization"] = "Bearer " + key
    if body is not None:
        data = json.dumps(body).encode()
        h["Content-Type"] = "application/json"
    c = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        c.request(method, path, body=data, headers=h)
        r = c.getresponse()
        raw = r.read()
        try:
            return r.status, json.loads(raw) if raw else None
        except ValueError:
            return r.status, raw
    finally:
        c.close()


def key():
    f = os.path.join(VAR, "key")
    if os.path.exists(f):
        return open(f).read().strip()
    st, d = req(A, "POST", "/v1/admin/tenants", {"name": "ctx5-%d" % time.time_ns()}, key=ADMIN)
    assert st in (200, 201), (st, d)
    st2, d2 = req(A, "PUT", "/v1/admin/tenants/%s/quotas" % d["id"], {"requests_per_minute": 100000}, key=ADMIN)
    assert st2 in (200, 204), (st2, d2)
    os.makedirs(VAR, exist_ok=True)
    open(f, "w").write(d["api_key"])
    return d["api_key"]


def upload(port, k, path, uri=None, data=None, title=None):
    boundary = "ctx5" + uuid.uuid4().hex
    name = os.path.basename(path)
    data = open(path, "rb").read() if data is None else data
    parts = []
    if uri:
        parts.append(b"--%s\r\nContent-Disposition: form-data; name=\"uri\"\r\n\r\n%s\r\n" % (boundary.encode(), uri.encode()))
    if title:
        parts.append(b"--%s\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\n%s\r\n" % (boundary.encode(), title.encode()))
    parts.append(b"--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"%s\"\r\n"
                 b"Content-Type: application/octet-stream\r\n\r\n" % (boundary.encode(), name.encode()) + data + b"\r\n")
    parts.append(b"--%s--\r\n" % boundary.encode())
    return req(port, "POST", "/v1/documents", key=k, data=b"".join(parts),
               headers={"Content-Type": "multipart/form-data; boundary=" + boundary})


def search(port, k, query, limit, ids=None):
    b = {"query": query, "limit": limit}
    if ids is not None:
        b["document_ids"] = ids
    return req(port, "POST", "/v1/search", b, key=k)


def metric(port, name):
    st, raw = req(port + 1000, "GET", "/metrics")  # the metrics port: serve scripts set it 1000 above the API's
    text = raw.decode() if isinstance(raw, bytes) else json.dumps(raw)
    out = {}
    for line in text.splitlines():
        m = re.match(r'^' + name + r'(\{[^}]*\})? (\S+)$', line)
        if m:
            out[m.group(1) or ""] = float(m.group(2))
    return out


def memory_expansions(port=B):
    return sum(v for s, v in metric(port, "quarry_search_context_expansions(?:_total)?").items() if 'source="memory"' in s)


def database_expansions(port=B):
    return sum(v for s, v in metric(port, "quarry_search_context_expansions(?:_total)?").items() if 'source="database"' in s)


def documents(k):
    st, d = req(A, "GET", "/v1/documents?limit=1000", key=k)
    assert st == 200, (st, d)
    return d["documents"]


def ingest():
    k = key()
    for rel in FILES:
        t = time.time()
        st, d = upload(A, k, os.path.join(DATA, rel), uri=rel)
        print("%-60s %s %s %.1fs" % (rel, st, {x: d.get(x) for x in ("id", "item_count", "chunk_count", "status")}
                                       if isinstance(d, dict) else d, time.time() - t), flush=True)


def warm(k, q="revenue", wait=120):
    """Repeats one search on B until its memory expansions counter moves."""
    before = memory_expansions()
    t = time.time()
    while time.time() - t < wait:
        search(B, k, q, 5)
        if memory_expansions() > before:
            return time.time() - t
        time.sleep(0.3)
    raise SystemExit("B never expanded from memory within %ds" % wait)


def queries(k, docs, n, seed=5):
    """Words and phrases from the documents' hits (headings, content), short and long, scoped or not."""
    rnd = random.Random(seed)
    texts, heads = [], []
    for q in ("the", "table", "revenue", "results", "section", "figure", "income", "duck", "page", "model"):
        st, d = search(A, k, q, 25)
        for h in d.get("results", d.get("hits", [])) if isinstance(d, dict) else []:
            texts.append(h.get("content") or "")
            heads.extend(h.get("headings") or [])
    words = [w for t in texts for w in re.findall(r"[A-Za-z][A-Za-z\-']{2,}", t)]
    out = []
    fixed = ["Net sales", "operating income", "Table 1", "duck", "AMT handbook", "cash flow statement",
             "Korean", "footnote", "TableFormer structure recognition", "*", "\\_escaped_",
             "earnings per share diluted", "DocLayNet", "page header", "rubber duck wikipedia"]
    for f in fixed:
        out.append(f)
    for h in sorted(set(heads)):
        out.append(h)
    while len(out) < n * 2:
        kind = rnd.random()
        if kind < 0.3 and words:
            out.append(rnd.choice(words))
        elif kind < 0.7 and texts:
            t = rnd.choice(texts).split()
            if not t:
                continue
            i = rnd.randrange(len(t)); out.append(" ".join(t[i:i + rnd.randint(2, 6)]))
        elif texts:
            t = rnd.choice(texts).split()
            if not t:
                continue
            i = rnd.randrange(len(t)); out.append(" ".join(t[i:i + rnd.randint(15, 60)]))
    rnd.shuffle(out)
    seen, res = set(), []
    ids = [d["id"] for d in docs]
    for q in out:
        q = q.strip()[:1000]
        if not q or q in seen:
            continue
        seen.add(q)
        limit = rnd.choice([1, 5, 10, 25])
        scope = None
        if rnd.random() < 0.25 and ids:
            scope = rnd.sample(ids, rnd.randint(1, min(3, len(ids))))
        res.append((q, limit, scope))
        if len(res) >= n:
            break
    return res


def diff(a, b, path=""):
    """Field paths where a and b differ (floats within TOL are equal; keys named *score* too)."""
    out = []
    if isinstance(a, dict) and isinstance(b, dict):
        for f in sorted(set(a) | set(b)):
            out += diff(a.get(f, "<missing>"), b.get(f, "<missing>"), path + "." + f)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append((path + ".length", len(a), len(b)))
        for i, (x, y) in enumerate(zip(a, b)):
            out += diff(x, y, "%s[%d]" % (path, i))
    elif isinstance(a, float) or isinstance(b, float):
        if not (isinstance(a, (int, float)) and isinstance(b, (int, float)) and abs(a - b) <= TOL):
            out.append((path, a, b))
    elif a != b:
        out.append((path, a, b))
    return out


def compare(n=150, qs=None, label="compare"):
    k = key()
    docs = documents(k)
    print("documents:", len(docs), "warm-up took %.1fs" % warm(k), flush=True)
    qs = qs or queries(k, docs, n)
    same = different = errors = 0
    kinds = {"scores only (order and every other field equal)": 0, "other chunks or order": 0,
             "same chunks in the same order, other fields differ": 0}
    max_score = 0.0
    mem0, db0 = memory_expansions(), database_expansions()
    hits = 0
    for q, limit, scope in qs:
        sa, ra = search(A, k, q, limit, scope)
        sb, rb = search(B, k, q, limit, scope)
        if sa != sb:
            errors += 1
            print("STATUS", sa, sb, repr(q), limit, scope, str(ra)[:200], str(rb)[:200])
            continue
        if sa != 200:
            same += 1
            continue
        d = diff(ra, rb)
        hits += len(ra.get("results", [])) if isinstance(ra, dict) else 0
        if d:
            different += 1
            ca = [r.get("chunk_id") for r in ra.get("results", [])]
            cb = [r.get("chunk_id") for r in rb.get("results", [])]
            if ca != cb:
                kinds["other chunks or order"] += 1
            elif all(p.endswith(".score") for p, _, _ in d):
                kinds["scores only (order and every other field equal)"] += 1
            else:
                kinds["same chunks in the same order, other fields differ"] += 1
            for p, x, y in d:
                if p.endswith(".score") and isinstance(x, float) and isinstance(y, float):
                    max_score = max(max_score, abs(x - y))
            print("DIFF query=%r limit=%d scope=%s" % (q, limit, scope))
            for p, x, y in d[:12]:
                print("   %s\n      A: %r\n      B: %r" % (p, str(x)[:300], str(y)[:300]))
        else:
            same += 1
    mem, db = memory_expansions() - mem0, database_expansions() - db0
    print("%s: queries=%d identical=%d different=%d status_mismatch=%d results=%d; B expansions memory=%d database=%d"
          % (label, len(qs), same, different, errors, hits, mem, db), flush=True)
    for kind, count in kinds.items():
        print("   different, %s: %d" % (kind, count))
    print("   largest score difference (same position): %.3g" % max_score)
    return qs, different + errors


def fresh():
    """Replace a document's content under the same uri, then delete it; B's very next search must follow."""
    k = key()
    warm(k)
    uri = "fresh/ctx5-note.md"
    v1 = b"# Zephyrine accounting\n\nThe zephyrine ledger balances quarterly with marmalade reserves.\n"
    v2 = b"# Zephyrine audit renamed\n\nThe zephyrine ledger now balances monthly with tamarind reserves.\n"
    ok = True
    st, d = upload(A, k, "note.md", uri=uri, data=v1)
    doc = d["id"]
    print("v1 ingest", st, doc)
    for step, expect_in, expect_out, data in (("v1", "marmalade", "tamarind", None), ("v2", "tamarind", "marmalade", v2)):
        if data is not None:
            st, d = upload(A, k, "note.md", uri=uri, data=data)
            print("v2 ingest", st, d.get("id"), d.get("status"))
        m0 = memory_expansions()
        st, rb = search(B, k, "zephyrine ledger", 5)
        st2, ra = search(A, k, "zephyrine ledger", 5)
        rs = [r for r in rb.get("results", []) if r.get("document_uri") == uri]
        text = json.dumps(rs)
        good = bool(rs) and expect_in in text and expect_out not in text and not diff(ra, rb)
        print("%s: B next search has %d result(s) of the uri; expected text %s, stale text %s, same as A %s; memory %+d -> %s"
              % (step, len(rs), expect_in in text, expect_out in text, not diff(ra, rb), memory_expansions() - m0,
                 "OK" if good else "FAIL"))
        if rs:
            print("   title=%r headings=%r content=%r" % (rs[0].get("document_title"), rs[0].get("headings"), rs[0].get("content")[:120]))
        ok &= good
    # rename only: the same bytes under the same uri with a new title, B's copy current before it
    warm(k, "zephyrine ledger")
    st, d = upload(A, k, "note.md", uri=uri, data=v2, title="Zephyrine renamed by title")
    print("rename ingest", st, d.get("status"), d.get("title"))
    m0, d0 = memory_expansions(), database_expansions()
    st, rb = search(B, k, "zephyrine ledger", 5)
    st2, ra = search(A, k, "zephyrine ledger", 5)
    titles = [r.get("document_title") for r in rb.get("results", []) if r.get("document_uri") == uri]
    titles_a = [r.get("document_title") for r in ra.get("results", []) if r.get("document_uri") == uri]
    good = titles == titles_a and not diff(ra, rb)
    print("rename: B title(s) %r, A title(s) %r; memory %+d database %+d -> %s"
          % (titles, titles_a, memory_expansions() - m0, database_expansions() - d0, "OK" if good else "FAIL"))
    ok &= good
    # let B build a copy at this version, then delete
    warm(k, "zephyrine ledger")
    st, d = req(A, "DELETE", "/v1/documents/" + doc, key=k)
    print("delete", st)
    m0, d0 = memory_expansions(), database_expansions()
    st, rb = search(B, k, "zephyrine ledger", 5)
    st_s, rs = search(B, k, "zephyrine ledger", 5, [doc])
    gone = not any(r.get("document_id") == doc or r.get("document_uri") == uri for r in rb.get("results", []))
    gone_scoped = isinstance(rs, dict) and not rs.get("results")
    print("delete: B next search without the document: %s; scoped to it: %s (%s); memory %+d database %+d -> %s"
          % (gone, gone_scoped, st_s, memory_expansions() - m0, database_expansions() - d0,
             "OK" if gone and gone_scoped else "FAIL"))
    ok &= gone and gone_scoped
    print("fresh:", "OK" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else "compare"
    if cmd == "ingest":
        ingest()
    elif cmd == "compare":
        n = int(sys.argv[2]) if len(sys.argv) > 2 else 150
        qs, bad = compare(n)
        json.dump(qs, open(os.path.join(VAR, "queries.json"), "w"))
        sys.exit(1 if bad else 0)
    elif cmd == "subset":
        qs = [tuple(x) for x in json.load(open(os.path.join(VAR, "queries.json")))]
        n = int(sys.argv[2]) if len(sys.argv) > 2 else 60
        _, bad = compare(qs=qs[:n], label="subset")
        sys.exit(1 if bad else 0)
    elif cmd == "fresh":
        sys.exit(fresh())
