"""R5-7: a tenant searches (its copies are built), is deleted, and the gateway's metric of copy
bytes does not go down: the deleted tenant's postings (and vectors/contexts when built) stay."""
import random, subprocess, time
import r5_rt as r
def m():
    t = subprocess.run(["curl", "-s", "localhost:%d/metrics" % r.PORT], capture_output=True, text=True).stdout
    return [l for l in t.splitlines() if l.startswith("quarry_search_") and "bytes" in l]
print("before:", m())
tid, key = r.new_tenant("r5copy")
random.seed(9)
for i in range(3):
    r.ingest(" ".join("w%d" % random.randint(0, 50000) for _ in range(3000)), uri="c%d.txt" % i, k=key)
for i in range(3):
    r.req("POST", "/v1/search", {"query": "w12 w77 %d" % i}, k=key); time.sleep(2)
print("after its searches:", m())
r.admin("DELETE", "/v1/admin/tenants/" + tid); time.sleep(5)
print("after its deletion:", m())
