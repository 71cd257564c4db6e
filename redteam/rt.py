"""Tiny client for the red-team gateway (stdlib only)."""
import http.client, json, os, time, uuid

HOST, PORT = "127.0.0.1", int(os.environ.get("RT_PORT", "18480"))
HERE = os.path.dirname(os.path.abspath(__file__))

def key(n=1):
    return open(os.path.join(HERE, "var", "key" if n == 1 else "key%d" % n)).read().strip()

def req(method, path, body=None, headers=None, k=None, timeout=600):
    h = {"Authorization": "Bearer " + (k or key())}
    h.update(headers or {})
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
        h.setdefault("Content-Type", "application/json")
    elif isinstance(body, str):
        body = body.encode()
    c = http.client.HTTPConnection(HOST, PORT, timeout=timeout)
    t0 = time.time()
    try:
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        return r.status, data, time.time() - t0
    finally:
        c.close()

def upload(name, data, uri=None, title=None, ctype="application/octet-stream", k=None, timeout=600):
    b = "rtb" + uuid.uuid4().hex
    parts = []
    for f, v in (("uri", uri), ("title", title)):
        if v is not None:
            parts.append(("--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n" % (b, f)).encode() + v.encode() + b"\r\n")
    parts.append(("--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"%s\"\r\nContent-Type: %s\r\n\r\n" % (b, name, ctype)).encode() + data + b"\r\n")
    body = b"".join(parts) + ("--%s--\r\n" % b).encode()
    return req("POST", "/v1/documents", body, {"Content-Type": "multipart/form-data; boundary=" + b}, k=k, timeout=timeout)

def ingest_json(content, uri=None, title=None, content_type=None, k=None, timeout=600):
    d = {"content": content}
    if uri is not None: d["uri"] = uri
    if title is not None: d["title"] = title
    if content_type is not None: d["content_type"] = content_type
    return req("POST", "/v1/documents", d, k=k, timeout=timeout)

def show(label, r, n=300):
    st, data, dt = r
    print("%-40s %s %8d bytes %6.2fs %s" % (label, st, len(data), dt, data[:n].decode("utf-8", "replace").replace("\n", " ")))
    return r
