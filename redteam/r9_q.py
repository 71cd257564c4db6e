import json, base64, urllib.request, sys, os, time
ADMIN = 'redteam-admin-token-r9-xxxx'
def req(method, url, key=None, body=None, raw=None, headers=None, timeout=600):
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    r = urllib.request.Request(url, data=data, method=method)
    if key: r.add_header('Authorization', 'Bearer ' + key)
    if data is not None: r.add_header('Content-Type', 'application/json')
    for k, v in (headers or {}).items(): r.add_header(k, v)
    try:
        with urllib.request.urlopen(r, timeout=timeout) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
def G(i): return 'http://127.0.0.1:%d' % (43010 + 10*i)
def tenant(name):
    s, b = req('POST', G(0) + '/v1/admin/tenants', ADMIN, {'name': name})
    j = json.loads(b); return j['id'], j['api_key']
def codes(*cs): return 'CODES:' + ';'.join(base64.b64encode(c.encode()).decode() for c in cs)
def ask(key, q, i=0, budgets=None, **kw):
    body = {'question': q, 'stream': False}
    if budgets: body['budgets'] = budgets
    body.update(kw)
    s, b = req('POST', G(i) + '/v1/analyses', key, body)
    return s, (json.loads(b) if b.startswith('{') else b)
def follow(key, aid, q, i=0, budgets=None, **kw):
    body = {'question': q, 'stream': False}
    if budgets: body['budgets'] = budgets
    body.update(kw)
    s, b = req('POST', G(i) + '/v1/analyses/%s/follow-ups' % aid, key, body)
    return s, (json.loads(b) if b.startswith('{') else b)
def events(key, aid, i=0):
    s, b = req('GET', G(i) + '/v1/analyses/%s/events' % aid, key)
    return [json.loads(l[6:]) for l in b.splitlines() if l.startswith('data: ')]
