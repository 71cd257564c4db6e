import http.client, json, os, signal, time
from r9_q import *
T=json.load(open('tenants.json')); A=T['A']
c = http.client.HTTPConnection('127.0.0.1', 43010, timeout=60)
c.request('POST', '/v1/analyses', body=json.dumps({'question': 'early ' + codes('print(1)'), 'stream': True}), headers={'Authorization': 'Bearer ' + A[1], 'Content-Type': 'application/json'})
r = c.getresponse()
os.kill(int(open('r0.pid').read()), signal.SIGKILL)
aid = r.getheader('X-Analysis-Id'); print('killed r0; analysis', aid)
