"""(harness gateway, RT_PORT=18581) code that has left the language opens many more streams on the
runner's one HTTP/2 connection (no new socket is needed): second Connect streams and unknown
methods, for SECONDS seconds; a second tenant probes search meanwhile."""
import json, os, threading, time
import r5_rt as r
SECONDS = int(os.environ.get("SECONDS", "20"))
raw = f"""#RAW
import time, grpc
ch = session._stub.Connect._channel if hasattr(session._stub.Connect, '_channel') else None
import gc
chans = [o for o in gc.get_objects() if type(o).__name__ == 'Channel' and type(o).__module__.startswith('grpc')]
ch = chans[0]
bad = ch.unary_unary('/quarry.sandbox.v1.Sandbox/Nope', request_serializer=lambda b: b, response_deserializer=lambda b: b)
con = ch.stream_stream('/quarry.sandbox.v1.Sandbox/Connect', request_serializer=lambda b: b, response_deserializer=lambda b: b)
n = 0; errs = {{}}
end = time.time() + {SECONDS}
while time.time() < end:
    fs = [bad.future(b'x' * 1000) for _ in range(50)]
    for f in fs:
        try: f.result()
        except grpc.RpcError as e: errs[str(e.code())] = errs.get(str(e.code()), 0) + 1
    it = con(iter([b'']))
    try:
        for m in it: pass
    except grpc.RpcError as e: errs['connect ' + str(e.code())] = errs.get('connect ' + str(e.code()), 0) + 1
    n += 51
print(n, errs)
"""
lat = []
def probe():
    end = time.time() + SECONDS + 2
    while time.time() < end:
        s, d, dt = r.req("POST", "/v1/search", {"query": "probe %f" % time.time()}, k=r.key(2))
        lat.append((s, dt)); time.sleep(0.5)
t = threading.Thread(target=probe); t.start()
st, res, dt = r.execute(raw, limits={"wall_time_ms": (SECONDS + 10) * 1000})
t.join()
print(st, "%.1fs" % dt, res["stdout"][:300] if isinstance(res, dict) else res[:300], (res.get("error") or {}).get("message", "")[:300] if isinstance(res, dict) else "")
ls = sorted(x[1] for x in lat)
print("victim searches", len(ls), "non-200", sum(1 for s, _ in lat if s != 200), "p50 %.3f max %.3f" % (ls[len(ls)//2], ls[-1]))
