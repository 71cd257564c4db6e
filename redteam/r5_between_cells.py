"""R5-4 (harness gateway, RT_PORT=18581): code that has left the language leaves a thread behind
that calls back while no cell runs (the model is thinking: the scripted model sleeps 8 s between
the two cells). The gateway serves callbacks whatever cell id they carry (GrpcSandboxSession.serve),
so they run, but no `callback` event records them. Cell 2 reports how many replies arrived."""
import json
import r5_rt as r
cell1 = """#RAW
import threading, time, json
got = []
def later():
    time.sleep(3)
    for i in range(10):
        cid = 'x%d' % i
        session._pending[cid] = lambda result=None, error=None: got.append((result is not None, len(json.dumps(result)) if result is not None else str(error)))
        session._send(callback=pb.CallbackRequest(cell_id='', call_id=cid, kind=pb.CALLBACK_KIND_SEARCH,
                      arguments_json=json.dumps({'query': 'fox revenue', 'limit': 5})))
threading.Thread(target=later, daemon=True).start()
import builtins; builtins.RT5_GOT = got
"""
cell2 = "#RAW\nimport builtins\nprint('replies while no cell ran:', builtins.RT5_GOT)\n"
q = "go <<CELL>>%s<</CELL>><<CELL>>SLEEP 8<</CELL>><<CELL>>%s<</CELL>>" % (cell1, cell2)
st, data, dt = r.req("POST", "/v1/analyses", {"question": q}, timeout=300)
a = json.loads(data)
print(st, a["status"], "usage", a["usage"])
print("step 3 stdout:", a["steps"][2]["result"]["stdout"][:400])
st, ev, _ = r.req("GET", "/v1/analyses/%s/events" % a["id"])
print("callback events recorded:", ev.count(b"event: callback"), "citations:", len(a["citations"]))
