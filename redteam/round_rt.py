"""Red-team client helpers (stdlib only), rounds 5 on: key/port from env (RT_PORT, RT_KEY, RT_KEY2) or
redteam/varN. Each round's rN_rt.py calls configure(N): port 18080 + 100 N, var dir redteam/varN."""
import http.client, http, json, os, socket, time, uuid

HOST = "127.0.0.1"
HERE = os.path.dirname(os.path.abspath(__file__))
ROUND = PORT = VAR = None

def configure(n):
    """Round n's defaults: its gateway's port (RT_PORT overrides) and its var dir."""
    global ROUND, PORT, VAR
    ROUND = n
    PORT = int(os.environ.get("RT_PORT", str(18080 + 100 * n)))
    VAR = os.path.join(HERE, "var%d" % n)

def key(n=1):
    env = os.environ.get("RT_KEY" if n == 1 else "RT_KEY%d" % n)
    if env:
        return env
    return open(os.path.join(VAR, "key" if n == 1 else "key%d" % n)).read().strip()

def admin_token():
    return os.environ.get("QUARRY_ADMIN_TOKEN") or open(os.path.join(VAR, "admin_token")).read().strip()

def req(method, path, body=None, headers=None, k=None, timeout=600, auth=True, port=None):
    h = {}
    if auth:
        h["Authorization"] = "Bearer " + (k or key())
    h.update(headers or {})
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
        h.setdefault("Content-Type", "application/json")
    elif isinstance(body, str):
        body = body.encode()
    c = http.client.HTTPConnection(HOST, port or PORT, timeout=timeout)
    t0 = time.time()
    try:
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        return r.status, data, time.time() - t0
    finally:
        c.close()

def admin(method, path, body=None):
    return req(method, path, body, k=admin_token())

def new_tenant(name="r5"):
    st, data, _ = admin("POST", "/v1/admin/tenants", {"name": "%s-%s" % (name, uuid.uuid4().hex[:8])})
    assert st == 201, (st, data)
    d = json.loads(data)
    return d["id"], d["api_key"]

def ingest(content, uri=None, title=None, k=None):
    d = {"content": content}
    if uri: d["uri"] = uri
    if title: d["title"] = title
    st, data, _ = req("POST", "/v1/documents", d, k=k)
    assert st in (200, 201), (st, data)
    return json.loads(data)

def execute(code, k=None, timeout=600, **extra):
    d = {"code": code}
    d.update(extra)
    st, data, dt = req("POST", "/v1/executions", d, k=k, timeout=timeout)
    try:
        return st, json.loads(data), dt
    except ValueError:
        return st, data, dt

def raw(data, timeout=10, port=None):
    """Sends raw bytes, returns what comes back until close or timeout."""
    s = socket.create_connection((HOST, port or PORT), timeout=timeout)
    s.sendall(data)
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except socket.timeout:
        pass
    s.close()
    return out

def containers(label_tenant=None):
    import subprocess
    f = ["--filter", "label=quarry.sandbox"]
    if label_tenant:
        f += ["--filter", "label=quarry.tenant=" + label_tenant]
    return subprocess.run(["docker", "ps", "-a", "-q"] + f, capture_output=True, text=True).stdout.split()

def show(label, r, n=300):
    st, data, dt = r
    if not isinstance(data, (bytes, str)):
        data = json.dumps(data)
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    print("%-40s %s %8d %6.2fs %s" % (label, st, len(data), dt, data[:n].replace("\n", " ")))
    return r
