"""F4b: the HTML form of F4. One <td colspan=1000 rowspan=R> (HtmlConverter.grid: MAX_SPAN = 1000 each
way) repeats its text in up to 1,000,000 slots; each row needs one cell of its own so that it is not
folded into the next. R=40 rows, 10 characters of cell text: a ~1 KB source."""
import json, os
from rt import *
rows, cell = int(os.environ.get("ROWS", "40")), int(os.environ.get("CELL", "10"))
text = ("span%d " % rows * 10)[:cell]
html = ("<html><body><table><tr><td colspan=1000 rowspan=%d>%s</td><td>r0</td></tr>" % (rows, text)
        + "".join("<tr><td>r%d</td></tr>" % i for i in range(1, rows)) + "</table></body></html>").encode()
print("html source bytes:", len(html))
r = show("html colspan=1000 rowspan=%d" % rows, upload("span-%d.html" % rows, html, ctype="text/html", timeout=900), 300)
if r[0] < 300:
    d = json.loads(r[1])
    items = req("GET", "/v1/documents/%s/items" % d["id"])[1].decode().splitlines()
    print("  items: %d, characters of item text: %d" % (len(items), sum(len(json.loads(l)["text"]) for l in items)))
