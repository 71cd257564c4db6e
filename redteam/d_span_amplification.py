"""F4: a few hundred bytes become millions of characters, thousands of items and chunks.
A DoclingDocument table declares num_rows x num_cols (up to 1,000,000 slots) and one cell spanning all
of them; the converter repeats its text in every slot (DoclingJsonConverter.grid), ItemBounds then
cuts the table into 100,000-character pieces and the chunker into ~1,500-character chunks, each
embedded. The same with HTML: one <td colspan=1000 rowspan=1000> (HtmlConverter.grid, MAX_SPAN).
ROWS, COLS, CELL (characters of cell text) choose the size; the source stays under 1 KB."""
import json, os, sys
from rt import *

rows, cols, cell = int(os.environ.get("ROWS", "20000")), int(os.environ.get("COLS", "1")), int(os.environ.get("CELL", "50"))
text = ("span%d " % rows * 100)[:cell]
doc = {"schema_name": "DoclingDocument", "version": "1.0.0", "name": "span",
       "body": {"self_ref": "#/body", "children": [{"$ref": "#/tables/0"}]},
       "texts": [], "groups": [], "pictures": [],
       "tables": [{"self_ref": "#/tables/0", "label": "table", "prov": [],
                   "data": {"num_rows": rows, "num_cols": cols, "table_cells": [
                       {"text": text, "start_row_offset_idx": 0, "end_row_offset_idx": rows,
                        "start_col_offset_idx": 0, "end_col_offset_idx": cols}]}}]}
src = json.dumps(doc).encode()
print("docling source bytes:", len(src))
r = show("docling %dx%d" % (rows, cols), upload("span-%d-%d.json" % (rows, cols), src, ctype="application/json", timeout=1800), 400)
if os.environ.get("HTML"):
    html = ("<html><body><table><tr><td colspan=1000 rowspan=1000>%s</td><td>a</td></tr>" % text
            + "<tr><td>b</td></tr>" * 999 + "</table></body></html>").encode()
    print("html source bytes:", len(html))
    show("html colspan/rowspan 1000", upload("span.html", html, ctype="text/html", timeout=1800), 400)
