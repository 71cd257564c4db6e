# cancel lost across a take-over: kill r0 mid-cell, cancel via r1 (202), watch r1 take over and finish
from r9_q import *
from r9_sse import stream
import json, time, threading, os, signal
T=json.load(open('tenants.json')); A=T['A']
loopy = "x=0\nfor k in range(12):\n    for i in range(8000000):\n        x+=i\n    print('tick', k)\nprint('end', x)"
out = []
threading.Thread(target=stream, args=(43010, 'POST', '/v1/analyses', A[1], {'question': 'cancelme ' + codes('y = 5\nprint(y)', loopy, 'print(y+1)'), 'stream': True}), kwargs={'out': out, 'label': 'r0-post'}, daemon=True).start()
while not any(isinstance(o[2], dict) and o[2].get('type') == 'code' and o[2].get('step') == '2' for o in out if len(o) > 2): time.sleep(0.01)
aid = [o for o in out if len(o) > 2 and o[2] == 'status'][0][4]
time.sleep(0.3)
os.kill(int(open('r0.pid').read()), signal.SIGKILL); print('killed r0')
s, b = req('POST', G(1) + '/v1/analyses/%s/cancel' % aid, A[1]); print('cancel via r1:', s, b)
time.sleep(45)
s, a = req('GET', G(1) + '/v1/analyses/' + aid, A[1]); j = json.loads(a); print('final:', j['status'], j.get('error'), 'moves', j.get('moves'), 'turns', j['usage']['model_turns'])
