"""R6-8: an execution's llm() outlives its execution and keeps the tenant's callback places.

An execution's llm() has no deadline but the model's request timeout (CallbackService.forTenant
without a deadline: Instant.MAX; QUARRY_MODEL_TIMEOUT_MS, 120 s by default), and nothing cancels it
when the cell times out or the sandbox goes: the call keeps running at the model, and its places
(QUARRY_TENANT_CALLBACKS_IN_FLIGHT, 8) are given back only when it returns. Eight 1.5 s executions
then stop every callback of the tenant (its analyses' search() and llm() included) until the model
answers (30 s with r5_model.py's SLOW prompts; up to the request timeout with a real model).

    python3 r6_orphan_llm.py
"""
import subprocess, threading, time
import r6_rt as rt


def model_conns():
    return subprocess.run("ss -tn state established '( dport = :18682 )' | tail -n +2 | wc -l", shell=True,
                          capture_output=True, text=True).stdout.strip()


def search_exec(label, k=None):
    st, d, dt = rt.execute("r = await search('revenue')\nprint(len(r))", k=k, limits={"wall_time_ms": 60000}, timeout=180)
    print("%-40s %.2fs %s" % (label, dt, d.get("stdout", "").strip() if isinstance(d, dict) else d), flush=True)


search_exec("before: a search() execution")
res = []


def one():
    st, d, dt = rt.execute("print(await llm('SLOW write ten thousand words'))", limits={"wall_time_ms": 1500})
    res.append(((d.get("error") or {}).get("type") if isinstance(d, dict) else st, round(dt, 1)))


t0 = time.time()
ts = [threading.Thread(target=one) for _ in range(8)]
[t.start() for t in ts]
[t.join() for t in ts]
print("8 executions, each one llm() in a 1.5 s cell: %s in %.1fs; gateway->model connections now: %s"
      % (res, time.time() - t0, model_conns()), flush=True)
threading.Thread(target=search_exec, args=("tenant 2 meanwhile: a search() execution", rt.key(2))).start()
search_exec("same tenant right after: a search() exec")
print("gateway->model connections now: %s" % model_conns())
