"""Issue 33 class 1 (and 5): new hostile shapes of about 1 MB not in HostileFixtures: Markdown parser
pathologies (brackets, backtick runs, references, nesting), HTML nesting/attribute floods, docling JSON
shared-reference fan-out. Each is ingested by the noisy tenant; prints status, time, the peak heap
and RSS during it, and the refusal. SHAPES=name,name picks some; SIZE (bytes, 1,000,000)."""
import json, os, sys, time
import r8_rt as rt, r8_lat as lat

SIZE = int(os.environ.get("SIZE", "1000000"))

def rep(s, n=None):
    n = n or SIZE // len(s)
    return s * n

def backticks():
    out, i = [], 1
    while sum(map(len, out)) < SIZE:
        out.append("a" + "`" * i + " "); i += 1
    return "".join(out)

def refs():
    n = SIZE // 40
    defs = "".join("[r%d]: http://x/%d\n" % (i, i) for i in range(n // 2))
    return defs + "\n" + "".join("[r%d] " % i for i in range(n // 2))

def nested_list():
    # each line one level deeper: a list in a list, 2 spaces more each time
    out, i = [], 0
    while sum(map(len, out)) < SIZE:
        out.append(" " * (2 * i) + "- x\n"); i += 1
    return "".join(out)

def docling_fanout():
    # one group whose children list the same text item 100,000 times
    n = SIZE // 30
    return json.dumps({"schema_name": "DoclingDocument", "version": "1.3.0", "name": "f",
        "body": {"self_ref": "#/body", "children": [{"$ref": "#/groups/0"}], "label": "unspecified"},
        "groups": [{"self_ref": "#/groups/0", "children": [{"$ref": "#/texts/0"}] * n, "label": "list"}],
        "texts": [{"self_ref": "#/texts/0", "label": "text", "text": "t" * 1000, "orig": "t" * 1000, "prov": []}],
        "tables": [], "pictures": [], "pages": {}})

def docling_groups_cycle():
    n = 20000
    groups = [{"self_ref": "#/groups/%d" % i, "children": [{"$ref": "#/groups/%d" % ((i + 1) % n)}, {"$ref": "#/groups/%d" % ((i * 7 + 3) % n)}], "label": "list"} for i in range(n)]
    return json.dumps({"schema_name": "DoclingDocument", "version": "1.3.0", "name": "g",
        "body": {"self_ref": "#/body", "children": [{"$ref": "#/groups/0"}], "label": "unspecified"},
        "groups": groups, "texts": [], "tables": [], "pictures": [], "pages": {}})

SHAPES = {
    "md_open_brackets": ("md", lambda: rep("[")),
    "md_bang_brackets": ("md", lambda: rep("![")),
    "md_link_close": ("md", lambda: rep("[a](")),
    "md_backtick_runs": ("md", backticks),
    "md_refs": ("md", refs),
    "md_angle": ("md", lambda: rep("<a ")),
    "md_html_comment": ("md", lambda: rep("<!--")),
    "md_quote_depth": ("md", lambda: rep(">") + " x\n"),
    "md_nested_list": ("md", nested_list),
    "md_entity": ("md", lambda: rep("&#x1;&amp;")),
    "md_table_rows": ("md", lambda: "|a|b|\n|-|-|\n" + rep("|\n")),
    "md_setext": ("md", lambda: rep("a\n=\n")),
    "html_depth": ("html", lambda: rep("<div>")),
    "html_table_depth": ("html", lambda: rep("<table><tr><td>")),
    "html_attrs": ("html", lambda: "<p " + rep('a=b ') + ">x</p>"),
    "html_li_depth": ("html", lambda: rep("<ul><li>")),
    "html_many_tables": ("html", lambda: rep("<table><tr><td colspan=1000>x</td></tr></table>")),
    "docling_fanout": ("json", docling_fanout),
    "docling_groups_cycle": ("json", docling_groups_cycle),
}

def run(name):
    ext, make = SHAPES[name]
    body = make()
    s = lat.Sampler(); s.start()
    t0 = time.time()
    try:
        st, d, dt = rt.req("POST", "/v1/documents", {"content": body, "uri": "%s.%s" % (name, ext)}, timeout=300)
        d = d.decode("utf-8", "replace")
    except Exception as e:
        st, d, dt = "EXC", repr(e), time.time() - t0
    s.stop = True; s.join()
    try:
        j = json.loads(d); d = j.get("error", {}).get("message") or "items %s chunks %s" % (j.get("item_count"), j.get("chunk_count"))
    except Exception:
        pass
    print("%-22s %7d B  %s %6.1fs  peak heap %5d MiB rss %5d MiB  %s" % (name, len(body), st, dt, s.max_heap, s.max_rss, str(d)[:230]))
    sys.stdout.flush()
    return st

if __name__ == "__main__":
    names = os.environ.get("SHAPES", ",".join(SHAPES)).split(",")
    for n in names:
        run(n)
