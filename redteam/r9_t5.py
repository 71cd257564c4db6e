# take-over: kill -9 the replica running an analysis mid-cell; follow its events from the other replica
from r9_q import *
from r9_sse import stream
import json, time, threading, os, signal, sys
T=json.load(open('tenants.json')); A=T['A']
mode = sys.argv[1]; TRIG = sys.argv[2]
loopy = "x=0\nfor k in range(12):\n    for i in range(8000000):\n        x+=i\n    print('tick', k)\nprint('end', x)"
out = []
th = threading.Thread(target=stream, args=(43010, 'POST', '/v1/analyses', A[1], {'question': 'loopy ' + codes('y = 5\nprint(y)', loopy, 'print(y+1)'), 'stream': True}), kwargs={'out': out, 'label': 'r0-post'}, daemon=True)
th.start()
while not any(o[2] == 'status' for o in out if len(o) > 2): time.sleep(0.1)
aid = [o for o in out if len(o) > 2 and o[2] == 'status'][0][4]
print('analysis', aid)
out2 = []
th2 = threading.Thread(target=stream, args=(43020, 'GET', '/v1/analyses/%s/events' % aid, A[1]), kwargs={'out': out2, 'label': 'r1-get'}, daemon=True)
th2.start()
# wait for tick 3
while not any(isinstance(o[2], dict) and o[2].get('type') == 'code' and o[2].get('step') == TRIG for o in out): time.sleep(0.01)
pid = int(open('r0.pid').read())
if mode == 'kill':
    os.kill(pid, signal.SIGKILL); print('killed r0 at', time.time())
else:
    os.kill(pid, signal.SIGSTOP); print('stopped r0 at', time.time())
    time.sleep(25)
    os.kill(pid, signal.SIGCONT); print('continued r0 at', time.time())
time.sleep(int(os.environ.get("WAIT", "40")))
for o in sorted(out + out2): print(round(o[0] % 1000, 2), *o[1:])
s, a = req('GET', G(1) + '/v1/analyses/' + aid, A[1]); j = json.loads(a); print(j['status'], j.get('error'), j.get('moves'), j.get('answer'))
print([ (st['step'], st['result']['stdout'][-40:]) for st in j['steps']])
