from r9_q import *
import json, time
T=json.load(open('tenants.json')); A=T['A']
big = 'print("A"*49000)'
s,a = ask(A[1], 'big ' + codes(big, big, big, big))
print('parent', s, a['status'], a['usage'])
t=time.time()
s,f = follow(A[1], a['id'], 'small ' + codes('print(1)'), budgets={'tokens': 100, 'model_turns': 1})
print('follow', s, f['status'], f.get('error'), f['usage'], 'budgets', f['budgets']['tokens'], time.time()-t)
