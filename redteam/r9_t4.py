from r9_q import *
import json, time
T=json.load(open('tenants.json')); A=T['A']
slow = "x=0\nfor i in range(400000000):\n    x+=i\nprint(x)"
t=time.time(); s,a = ask(A[1], 'slow ' + codes(slow)); print('parent', s, a['status'], a['usage']['total_tokens'], round(time.time()-t,1))
n0 = sum(1 for _ in open('model.log'))
t=time.time()
s,f = follow(A[1], a['id'], 'q ' + codes('print(1)'), budgets={'wall_time_ms': 1000})
print('follow wall_time 1000ms:', s, f['status'], f.get('error'), f['usage']['total_tokens'], 'took', round(time.time()-t,1), 's; model calls:', (sum(1 for _ in open('model.log'))-n0)//2)
