"""R6-4: an ingest whose bytes equal any other document of the tenant is answered "unchanged" with
that other document, whatever its uri: the uri's own document is neither created nor replaced.

A client that keeps uri B up to date sends B's new version; when those bytes happen to be what
uri A holds, B keeps its old text (searches find it, /documents shows it), the answer names A's id
and title with status "unchanged", and deleting A later removes the only copy of the text B was
meant to hold. Also: the same bytes under a new title keep the old title.

    python3 r6_same_bytes.py
"""
import json
import r6_rt as rt


def main():
    tid, k = rt.new_tenant("r6same")
    try:
        a = rt.ingest("Quarterly report: revenue 7 million, margin 31 percent.", uri="reports/a", title="A", k=k)
        b1 = rt.ingest("Draft: revenue unknown, to be filled in.", uri="reports/b", title="B draft", k=k)
        print("A:", a["id"], a["status"], "| B v1:", b1["id"], b1["status"])
        # B's final version happens to be the same text as A.
        st, data, _ = rt.req("POST", "/v1/documents", {"content": "Quarterly report: revenue 7 million, margin 31 percent.",
                                                      "uri": "reports/b", "title": "B final"}, k=k)
        b2 = json.loads(data)
        print("B v2 (A's bytes) ->", st, b2["status"], "id", b2["id"], "(A's)" if b2["id"] == a["id"] else "", "title", b2["title"])
        st, data, _ = rt.req("GET", "/v1/documents/%s" % b1["id"], k=k)
        d = json.loads(data)
        print("GET B:", st, "uri", d.get("uri"), "title", d.get("title"), "version", d.get("version"))
        st, data, _ = rt.req("GET", "/v1/documents/%s/content" % b1["id"], k=k)
        print("B's content now:", st, data.decode()[:80])
        st, data, _ = rt.req("POST", "/v1/search", {"query": "draft revenue unknown"}, k=k)
        hits = json.loads(data).get("results") or []
        print("search 'draft revenue unknown': %d hits: %s" % (len(hits), [h.get("content", "")[:45] for h in hits]))
        rt.req("DELETE", "/v1/documents/%s" % a["id"], k=k)
        st, data, _ = rt.req("GET", "/v1/documents?limit=10", k=k)
        print("after deleting A, the tenant's documents:", [(x.get("uri"), x.get("title")) for x in json.loads(data).get("documents", [])])
    finally:
        rt.admin("DELETE", "/v1/admin/tenants/" + tid)


if __name__ == "__main__":
    main()
