"""Round 4 client (stdlib only): replicas on RT4_PORTS (default 8091,8092), keys in redteam/var4/."""
import http.client, json, os, re, time

HOST = "127.0.0.1"
HERE = os.path.dirname(os.path.abspath(__file__))
VAR = os.path.join(HERE, "var4")
ADMIN = os.environ.get("QUARRY_ADMIN_TOKEN", "redteam-admin-token-0123456789")
PORTS = [int(p) for p in os.environ.get("RT4_PORTS", "8091,8092").split(",")]

def req(port, method, path, body=None, key=None, timeout=600, raw=False):
    h = {}
    if key:
        h["Authorization"] = "Bearer " + key
    if body is not None:
        body = json.dumps(body).encode()
        h["Content-Type"] = "application/json"
    c = http.client.HTTPConnection(HOST, port, timeout=timeout)
    t0 = time.time()
    try:
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        dt = time.time() - t0
        if raw:
            return r.status, data, dt
        try:
            return r.status, json.loads(data) if data else None, dt
        except ValueError:
            return r.status, data, dt
    finally:
        c.close()

def tenant(name, port=None):
    """A new tenant (admin API) and its key; cached in var4/key-NAME."""
    os.makedirs(VAR, exist_ok=True)
    f = os.path.join(VAR, "key-" + name)
    if os.path.exists(f):
        return open(f).read().strip()
    st, d, _ = req(port or PORTS[0], "POST", "/v1/admin/tenants", {"name": "%s-%d" % (name, time.time_ns())}, key=ADMIN)
    assert st in (200, 201), (st, d)
    # the experiment drives more than the default 600 requests a minute
    st2, d2, _ = req(port or PORTS[0], "PUT", "/v1/admin/tenants/%s/quotas" % d["id"], {"requests_per_minute": 100000}, key=ADMIN)
    assert st2 in (200, 204), (st2, d2)
    open(f, "w").write(d["api_key"])
    return d["api_key"]

def ingest(port, key, content, uri=None, title=None):
    b = {"content": content}
    if uri: b["uri"] = uri
    if title: b["title"] = title
    return req(port, "POST", "/v1/documents", b, key=key)

def delete(port, key, doc):
    return req(port, "DELETE", "/v1/documents/" + doc, key=key)

def search(port, key, query, limit=10, document_ids=None, timeout=600):
    b = {"query": query, "limit": limit}
    if document_ids is not None: b["document_ids"] = document_ids
    return req(port, "POST", "/v1/search", b, key=key, timeout=timeout)

def metrics(port):
    # /metrics is on the metrics port, which w_serve.sh sets 1000 above the API's
    st, data, _ = req(port + 1000, "GET", "/metrics", raw=True)
    out = {}
    for line in data.decode().splitlines():
        if line.startswith("#"): continue
        m = re.match(r'^(quarry_search_[a-z_]+(?:\{[^}]*\})?) (\S+)$', line)
        if m: out[m.group(1)] = float(m.group(2))
    return out

def ranked(port):
    """quarry_search_{vector,full_text}_ranked counters by source."""
    return {k: v for k, v in metrics(port).items() if "rankings" in k or "index_bytes" in k}

def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100.0 * len(xs)))] if xs else float("nan")


def searches(port, key, queries, seconds, out=None):
    """One search after another (limit 10) for SECONDS, each must answer 200; appends (time, ms) to
    OUT and returns it."""
    out = [] if out is None else out
    i, t0 = 0, time.time()
    while time.time() - t0 < seconds:
        st, d, dt = search(port, key, queries[i % len(queries)], limit=10, timeout=120)
        assert st == 200, (st, d)
        out.append((time.time(), dt * 1000)); i += 1
    return out

def summary(name, ms):
    print("%-6s victim searches %5d  p50 %6.1f ms  p90 %6.1f  p99 %6.1f  max %6.1f" % (name, len(ms), pct(ms, 50), pct(ms, 90), pct(ms, 99), max(ms)), flush=True)

VOCAB = """harbour lantern quarterly glacier invoice orchard tungsten falcon ledger monsoon sapphire
turbine velvet walrus yeast zeppelin copper meadow pylon saffron violin octopus cathedral telescope
volcano penguin bicycle chocolate dinosaur espresso fjord giraffe hammock igloo jaguar kayak lemonade
marathon nebula origami pyramid quartz rhubarb satellite tornado umbrella vineyard waffle xylophone
yacht zucchini anchor blizzard cactus dolphin eclipse flamingo gondola hurricane iceberg jellyfish
kangaroo lighthouse mushroom nightingale observatory pineapple quicksand reindeer scarecrow tambourine
unicorn volleyball windmill avalanche barnacle cinnamon dragonfly emerald fireworks gargoyle hedgehog""".split()
def misspelt(s):
    return " ".join(w + w[-1] for w in s.rstrip(".").split())
