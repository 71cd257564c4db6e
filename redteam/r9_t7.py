from r9_q import *
import json, time
T=json.load(open('tenants.json')); A=T['A']
s,a = ask(A[1], 'c0 ' + codes('n = 0\nprint(n)'), i=1)
ids=[a['id']]; print(a['status'])
for k in range(1, 18):
    t=time.time()
    s,f = follow(A[1], ids[-1], 'c%d ' % k + codes('n += 1\nprint(n)'), i=1)
    print(k, s, f.get('status') if isinstance(f, dict) else f, (f.get('answer') or '')[:60] if isinstance(f, dict) else '', str(f.get('error'))[:150] if isinstance(f, dict) else '', round(time.time()-t,1))
    if s != 200: break
    ids.append(f['id'])
json.dump(ids, open('chain.json','w'))
