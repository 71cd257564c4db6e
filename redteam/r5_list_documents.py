"""R5-1 (part): list_documents() has no budget in analyses: one 30 s cell calls it in a loop; every
call is a database query and a `callback` event. Prints the calls made and the other tenant's search."""
import json, threading, time
import r5_rt as r
cell = "n = 0\nwhile n < 100000:\n    await list_documents()\n    n += 1\n"
lat = []
def probe():
    end = time.time() + 33
    while time.time() < end:
        st, d, dt = r.req("POST", "/v1/search", {"query": "lp %f" % time.time()}, k=r.key(2)); lat.append(dt); time.sleep(0.5)
t = threading.Thread(target=probe); t.start()
st, d, dt = r.req("POST", "/v1/analyses", {"question": "go <<CELL>>" + cell + "<</CELL>>"}, timeout=200)
t.join()
a = json.loads(d)
st2, ev, _ = r.req("GET", "/v1/analyses/%s/events" % a["id"])
print(a["status"], a["usage"], "callback events:", ev.count(b"event: callback"), "events bytes", len(ev))
lat.sort(); print("other tenant's search p50 %.3f max %.3f" % (lat[len(lat)//2], lat[-1]))
