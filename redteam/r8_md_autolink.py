"""Issue 33 class 1/5 (CPU before bounds): Markdown "<a " repeated is quadratic in commonmark's
AutolinkInlineParser (each '<' scans the rest of the paragraph for '>'), inside the parse, where no
deadline or budget is checked. Prints the ingest time at SIZES (bytes); 1 MB ran > 300 s of one
ingest worker's CPU (client timed out; the parse went on). Env SIZES="20000,40000,80000"."""
import os, time
import r8_rt as rt

for n in [int(x) for x in os.environ.get("SIZES", "20000,40000,80000").split(",")]:
    body = ("<a " * (n // 3 + 1))[:n]
    t = time.time()
    try:
        st, d, dt = rt.req("POST", "/v1/documents", {"content": body, "uri": "autolink-%d-%d.md" % (n, t)}, timeout=900)
        d = d[:160]
    except Exception as e:
        st, d, dt = "EXC", repr(e), time.time() - t
    print("%8d bytes of '<a ': %s in %.1fs %s" % (n, st, dt, d), flush=True)
