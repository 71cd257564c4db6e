import http.client, json, sys, time, threading
def stream(host_port, method, path, key, body=None, headers=None, out=None, label=''):
    c = http.client.HTTPConnection('127.0.0.1', host_port, timeout=300)
    h = {'Authorization': 'Bearer ' + key, 'Accept': 'text/event-stream'}
    h.update(headers or {})
    data = None
    if body is not None: data = json.dumps(body); h['Content-Type'] = 'application/json'
    c.request(method, path, body=data, headers=h)
    r = c.getresponse()
    out.append((time.time(), label, 'status', r.status, r.getheader('X-Analysis-Id')))
    buf = b''
    try:
        while True:
            line = r.fp.readline()
            if not line: out.append((time.time(), label, 'EOF')); break
            if line.startswith(b'data: '):
                e = json.loads(line[6:])
                brief = {k: (str(v)[:60]) for k, v in e.items() if k in ('seq','type','step','text','moves','status','error','channel')}
                out.append((time.time(), label, brief))
    except Exception as ex:
        out.append((time.time(), label, 'EXC', repr(ex)))
