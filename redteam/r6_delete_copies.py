"""Held in round 6: a tenant deleted while its searches (and the copies they build) are under way;
the gateway's copy bytes go back to where they were (forgetTenant, then watchTenants every 5 s)."""
import random, subprocess, threading, time
import r6_rt as rt
def m():
    t = subprocess.run(["curl", "-s", "localhost:%d/metrics" % (rt.PORT + 1000)], capture_output=True, text=True).stdout
    return [l for l in t.splitlines() if l.startswith("quarry_search_") and ("bytes" in l or "builds" in l)]
print("before:", m())
for trial in range(3):
    tid, key = rt.new_tenant("r6copy")
    random.seed(trial)
    for i in range(3):
        rt.ingest(" ".join("w%d" % random.randint(0, 50000) for _ in range(3000)), uri="c%d.txt" % i, k=key)
    res = []
    def s(i):
        try: res.append(rt.req("POST", "/v1/search", {"query": "w12 w77 %d" % i}, k=key, timeout=30)[0])
        except Exception as e: res.append(type(e).__name__)
    ts = [threading.Thread(target=s, args=(i,)) for i in range(6)]
    [t.start() for t in ts]; time.sleep(0.05 * trial)
    st = rt.admin("DELETE", "/v1/admin/tenants/" + tid)[0]
    [t.join() for t in ts]
    print("trial %d: delete %s, searches %s, right after: %s" % (trial, st, res, m()))
time.sleep(7)
print("7 s later:", m())
