"""Authentication edges (gateway on RT_PORT, default 18580): malformed Authorization headers, the
admin API with a tenant key, keys of a revoked key and a deleted tenant, case tricks; then a flood
of well-formed unknown keys (8 clients, FLOOD seconds) while the second tenant searches."""
import json, os, threading, time, uuid
import r5_rt as r
k = r.key()
cases = {
    "no header": None, "empty": "", "Bearer only": "Bearer", "Bearer space": "Bearer ", "lowercase scheme": "bearer " + k,
    "BEARER": "BEARER " + k, "tab": "Bearer\t" + k, "two spaces": "Bearer  " + k, "trailing space": "Bearer " + k + " ",
    "Basic": "Basic " + k, "key only": k, "upper key": "Bearer " + k.upper(), "key+NUL": "Bearer " + k + "\x00",
    "long 60KB": "Bearer " + "a" * 60000, "non-ascii": "Bearer qk_ä", "admin token as tenant": "Bearer " + r.admin_token(),
    "key twice": "Bearer " + k + " " + k,
}
for name, h in cases.items():
    headers = {} if h is None else {"Authorization": h}
    try:
        st, d, dt = r.req("GET", "/v1/documents?limit=1", headers=headers, auth=False)
        print("%-24s %s %s" % (name, st, d[:90]))
    except Exception as e:
        print("%-24s EXC %r" % (name, e))
raw = r.raw(("GET /v1/documents?limit=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n" % (k, k)).encode())
print("%-24s %s" % ("two headers", raw.split(b"\r\n")[0]))
for path in ("/v1/admin/tenants", "/v1/admin/tenants/%s" % uuid.uuid4()):
    st, d, _ = r.req("GET", path)
    print("tenant key on %-30s %s %s" % (path[:30], st, d[:80]))
# a revoked key, and a deleted tenant's key
tid, tkey = r.new_tenant("r5auth")
st, d, _ = r.req("GET", "/v1/documents", k=tkey); print("new tenant", st)
keys = json.loads(r.admin("GET", "/v1/admin/tenants/%s/keys" % tid)[1])
kid = (keys.get("keys") or keys)[0]["id"]
st, _, _ = r.admin("DELETE", "/v1/admin/tenants/%s/keys/%s" % (tid, kid)); print("revoke", st)
st, d, _ = r.req("GET", "/v1/documents", k=tkey); print("revoked key", st, d[:80])
tid2, tkey2 = r.new_tenant("r5auth2")
r.req("GET", "/v1/documents", k=tkey2)
st, _, _ = r.admin("DELETE", "/v1/admin/tenants/%s" % tid2); print("delete tenant", st)
st, d, _ = r.req("GET", "/v1/documents", k=tkey2); print("deleted tenant's key", st, d[:80])
FLOOD = int(os.environ.get("FLOOD", "15"))
if FLOOD:
    n = [0]; codes = {}
    def flood():
        end = time.time() + FLOOD
        while time.time() < end:
            bogus = "qk_%s_%s" % (uuid.uuid4().hex[:12], (uuid.uuid4().hex * 2)[:43])
            st, _, _ = r.req("GET", "/v1/documents?limit=1", k=bogus)
            codes[st] = codes.get(st, 0) + 1; n[0] += 1
    ts = [threading.Thread(target=flood) for _ in range(8)]
    [t.start() for t in ts]
    lat = []
    end = time.time() + FLOOD
    while time.time() < end:
        st, _, dt = r.req("POST", "/v1/search", {"query": "probe %f" % time.time()}, k=r.key(2)); lat.append(dt); time.sleep(0.3)
    [t.join() for t in ts]
    lat.sort()
    print("bogus-key flood: %d requests (%.0f/s) %s; victim search p50 %.3f max %.3f" % (n[0], n[0] / FLOOD, codes, lat[len(lat)//2], lat[-1]))
