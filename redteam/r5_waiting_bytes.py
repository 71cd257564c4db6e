"""R5-2b (harness gateway, RT_PORT=18581): code that has left the language sends 64 llm() callbacks
of 15 MB each whose model call takes 30 s (the scripted model sleeps on 'SLOW'): 4 run (per-sandbox
limit), the rest wait in the gateway holding their arguments; the limit is a count (64), not bytes.
Prints the gateway's heap before and while they wait."""
import os, subprocess, threading, time
import r5_rt as r
JH = subprocess.run(["/work/main/scripts/setup.sh", "--print-java-home"], capture_output=True, text=True).stdout.strip()
pid = open(os.path.join(r.VAR, "%d.pid" % r.PORT)).read().strip()
def heap():
    subprocess.run([JH + "/bin/jcmd", pid, "GC.run"], capture_output=True)
    return subprocess.run([JH + "/bin/jcmd", pid, "GC.heap_info"], capture_output=True, text=True).stdout.split("\n")[1].strip()
print("before:", heap())
raw = """#RAW
import json, time
big = json.dumps({'prompt': 'SLOW ' + 'x' * 15_000_000})
for i in range(64):
    session._send(callback=pb.CallbackRequest(cell_id=cell_id, call_id='w%d' % i, kind=pb.CALLBACK_KIND_LLM, arguments_json=big))
time.sleep(25)
"""
res = []
t = threading.Thread(target=lambda: res.append(r.execute(raw, limits={"wall_time_ms": 30000}))); t.start()
time.sleep(15)
print("while waiting:", heap())
t.join(); print("execution:", str(res[0])[:400])
time.sleep(3)
print("after:", heap())
