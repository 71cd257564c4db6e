from r9_q import *
import json, time, threading
T=json.load(open('tenants.json'))
C = tenant('carol'); print(C)
s,b = req('PUT', G(0) + '/v1/admin/tenants/%s/quotas' % C[0], ADMIN, {'model_tokens_per_day': 140000}); print('quota', s, b[:200])
big = 'print("A"*49000)'
s,a = ask(C[1], 'big ' + codes(big, big, big, big))
print('parent', s, a['status'], a['usage']['total_tokens'])
res = []
def go():
    res.append(follow(C[1], a['id'], 'small ' + codes('print(1)'), budgets={'tokens': 100, 'model_turns': 1}))
ts = [threading.Thread(target=go) for _ in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]
for s, f in res: print('follow', s, f['status'] if isinstance(f, dict) else f, f['usage']['total_tokens'] if isinstance(f, dict) and 'usage' in f else '')
s, b = req('GET', G(0) + '/v1/admin/tenants/%s' % C[0], ADMIN); print(s, b[:600])
s, f = follow(C[1], a['id'], 'after ' + codes('print(1)')); print('after quota:', s, str(f)[:200])
