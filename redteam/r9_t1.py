from r9_q import *
import json
T=json.load(open('tenants.json')); A=T['A']; B=T['B']
s,a = ask(A[1], 'first ' + codes('x = 41\nsecret="ALICE-SECRET"\nprint(x+1)'))
aid = a['id']; print('A analysis', s, a['status'])
# cross-tenant
s,b = follow(B[1], aid, 'steal ' + codes('print(secret)'))
print('B follow A:', s, str(b)[:300])
s,b = follow(B[1], aid, 'steal ' + codes('print(secret)'), i=1)
print('B follow A on r1:', s, str(b)[:300])
# own follow-up
s,f = follow(A[1], aid, 'again ' + codes('print(secret, x)'))
print('A follow:', s, f.get('status'), f.get('answer'), f.get('follows'), f.get('error'))
json.dump({'aid':aid,'fid':f['id']}, open('ids.json','w'))
# malformed bodies
cases = [b'', b'null', b'[]', b'"x"', b'{', b'{"question": 5}', b'{"question": ""}', b'{"question": "q", "budgets": []}',
  b'{"question": "q", "budgets": {"model_turns": -1}}', b'{"question": "q", "budgets": {"model_turns": 1e40}}',
  b'{"question": "q", "budgets": {"model_turns": "5"}}', b'{"question": "q", "budgets": {"nope": 1}}',
  b'{"question": "q", "stream": "yes"}', b'{"question": "q", "document_ids": []}', b'{"question":"q","question":"r"}',
  b'{"question": "q", "budgets": {"wall_time_ms": 9999999999999}}', b'{"question": "q", "budgets": {"tokens": 1.5}}',
  b'{"question": "q", "budgets": null}', b'{"question": null}', b'\xff\xfe', b'{"question": "\\ud800"}',
  b'{"question": "q", "budgets": {"model_turns": null}}', b'{"question": "q", "budgets": {"execute_code_calls": 0}}']
for c in cases:
    s, b = req('POST', G(0) + '/v1/analyses/%s/follow-ups' % aid, A[1], raw=c)
    print(s, c[:60], b[:160])
for path in ['/v1/analyses/not-a-uuid/follow-ups', '/v1/analyses/00000000-0000-0000-0000-000000000000/follow-ups', '/v1/analyses/%s/follow-ups?x=1' % aid.upper()]:
    s, b = req('POST', G(0) + path, A[1], {'question': 'q '+codes('print(1)'), 'stream': False})
    print(s, path, b[:200])
