"""F3: Chunk.context(title, uri) runs title.contains(fileName) (String.indexOf, O(n*m) worst case) on
unbounded strings, on a worker thread, before the transaction. title = 'a'*N, uri = 'a'*(N/2-1) + 'b':
every one of the N/2 positions compares N/2 characters. Time grows with N^2; a JSON body may carry
strings of up to 20,000,000 characters (Jackson's limit), so one request holds a worker thread for
hours. SIZES=comma-separated N values."""
import os, sys
from rt import *

for n in [int(x) for x in os.environ.get("SIZES", "100000,200000,400000").split(",")]:
    m = n // 2
    show("N=%d" % n, ingest_json("quadratic probe %d" % n, uri="a" * (m - 1) + "b", title="a" * n, timeout=900), 160)
