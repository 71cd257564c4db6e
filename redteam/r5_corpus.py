"""Regression: the shared escape corpus through POST /v1/executions (5 s wall time each).
Prints id, expect, HTTP status, success, error type, and flags anything suspicious."""
import json, os, sys, time
import r5_rt as r

corpus = json.load(open(os.path.join(r.HERE, "..", "..", "shared", "data", "escape-corpus.dev.json")))
bad = 0
for p in corpus:
    st, res, dt = r.execute(p["code"], limits={"wall_time_ms": 5000})
    if not isinstance(res, dict):
        print(p["id"], "NON-JSON", st, res[:200]); bad += 1; continue
    err = (res.get("error") or {})
    out = (res.get("stdout") or "")[:120].replace("\n", " | ")
    flag = ""
    if st != 200: flag = "STATUS"
    elif p["expect"] == "must_fail" and res.get("success"): flag = "SUCCEEDED"
    print("%-6s %-17s %s %.1fs %-5s %-22s %s %s" % (p["id"], p["expect"], st, dt, res.get("success"), err.get("type"), flag, out))
    bad += bool(flag)
print("flagged:", bad, "containers left:", len(r.containers()))
