"""R6-7: a client that hangs up in the middle of a request body (a key is needed: the body is read
after authentication) makes the gateway log an ERROR "unexpected failure" (HttpClosedException,
ErrorMapping's default case) and try to answer 500. N requests -> N ERROR lines: alerts on ERROR
rates fire, and the log grows at the client's pace.
    N=2000 python3 r6_hangup_errors.py
"""
import os, socket, subprocess, time
import r6_rt as rt
N = int(os.environ.get("N", "2000"))
LOG = os.path.join(rt.VAR, "%d.log" % rt.PORT)
def errors():
    return int(subprocess.run(["grep", "-c", "ERROR d.q.api.ErrorMapping   unexpected failure", LOG], capture_output=True, text=True).stdout or 0)
before = errors(); t0 = time.time()
head = ("POST /v1/search HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"
        "Content-Length: 1000\r\n\r\n{\"query\": " % rt.key()).encode()
for _ in range(N):
    s = socket.create_connection((rt.HOST, rt.PORT)); s.sendall(head); time.sleep(0.002); s.close()
time.sleep(2)
print("%d requests cut mid-body in %.1f s: %d new ERROR 'unexpected failure' lines in the log" % (N, time.time() - t0, errors() - before))
