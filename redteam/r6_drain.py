"""Round 6: SIGTERM while work is under way (drain), against the gateway of r6_serve.sh (its pid in
var6/<port>.pid; restart it afterwards). Kills the gateway: run it last.

    IDLE=5 python3 r6_drain.py

1. An ingest of a ~400 KB text document (slow to embed) and a streamed analysis (a cell waiting
   30 s on llm()) are started; SIGTERM comes 1.5 s later.
2. During the drain: a search, /healthz, /readyz, a new ingest, a new analysis, each on a fresh
   connection; then 45 silent connections are opened and looked at 4 idle limits later (R6-6: the
   drain stops the idle sweep at once, Gateway.stop cancels connectionSweep, so silent connections
   are never closed again while the gateway drains, up to QUARRY_DRAIN_GRACE_SECONDS + shutdown).
3. After exit: the ingest's answer, and whether the database holds a half-written document
   (a document whose chunk rows do not match its chunk_count, or chunks without a document).
"""
import json, os, signal, socket, subprocess, threading, time
import r6_rt as rt

IDLE = float(os.environ.get("IDLE", "5"))
PID = int(open(os.path.join(rt.VAR, "%d.pid" % rt.PORT)).read().strip())


def psql(sql):
    return subprocess.run(["psql", "-h", "127.0.0.1", "-U", "quarry", "-d", "quarry_redteam6", "-Atc",
                           "set quarry.all_tenants='on'; " + sql], capture_output=True, text=True,
                          env=dict(os.environ, PGPASSWORD="quarry")).stdout.strip().splitlines()[1:]


def try_req(label, method, path, body=None, k=None, auth=True, timeout=15):
    try:
        st, data, dt = rt.req(method, path, body, k=k, auth=auth, timeout=timeout)
        print("  during drain %-10s %s %.2fs %s" % (label, st, dt, data[:140].decode(errors="replace")), flush=True)
    except Exception as e:
        print("  during drain %-10s %s" % (label, type(e).__name__), flush=True)


def main():
    results = {}

    def ingest():
        text = "".join("Paragraph %d: revenue in segment %d rose by %d percent over the year.\n" % (i, i % 17, i % 23)
                       for i in range(6000))
        try:
            st, data, dt = rt.req("POST", "/v1/documents", {"content": text, "uri": "drain-doc-%d" % time.time()}, timeout=300)
            results["ingest"] = (st, data[:200], round(dt, 1))
        except Exception as e:
            results["ingest"] = type(e).__name__

    def analysis():
        try:
            st, data, dt = rt.req("POST", "/v1/analyses", {"question": "<<CELL>>print(await llm('SLOW essay'))<</CELL>>"},
                                  timeout=300)
            d = json.loads(data)
            results["analysis"] = (st, d.get("status"), round(dt, 1))
        except Exception as e:
            results["analysis"] = type(e).__name__

    ts = [threading.Thread(target=ingest), threading.Thread(target=analysis)]
    [t.start() for t in ts]
    time.sleep(1.5)
    t_term = time.time()
    os.kill(PID, signal.SIGTERM)
    print("SIGTERM sent to %d" % PID, flush=True)
    time.sleep(0.5)
    try_req("search", "POST", "/v1/search", {"query": "revenue"}, k=rt.key(2))
    try_req("healthz", "GET", "/healthz", auth=False)
    try_req("readyz", "GET", "/readyz", auth=False)
    try_req("ingest", "POST", "/v1/documents", {"content": "new during drain", "uri": "drain-new"}, k=rt.key(2))
    try_req("analysis", "POST", "/v1/analyses", {"question": "hi"}, k=rt.key(2))
    silent = []
    for _ in range(45):
        try:
            silent.append(socket.create_connection((rt.HOST, rt.PORT), timeout=5))
        except Exception:
            break
    time.sleep(4 * IDLE)
    open_ = 0
    for s in silent:
        s.setblocking(False)
        try:
            open_ += 0 if s.recv(1) == b"" else 1
        except BlockingIOError:
            open_ += 1
        except OSError:
            pass
    print("  %d silent connections opened during the drain; %d still open %.0f s (4 idle limits) later" % (
        len(silent), open_, 4 * IDLE), flush=True)
    try_req("healthz2", "GET", "/healthz", auth=False, timeout=5)
    for s in silent:
        s.close()
    [t.join(timeout=200) for t in ts]
    for _ in range(200):
        try:
            os.kill(PID, 0)
            time.sleep(1)
        except ProcessLookupError:
            break
    print("gateway exited %.1f s after SIGTERM" % (time.time() - t_term))
    print("ingest:", results.get("ingest"))
    print("analysis:", results.get("analysis"))
    print("documents whose chunk rows differ from chunk_count:",
          psql("select d.uri, d.chunk_count, (select count(*) from chunks c where c.document_id=d.id) from documents d "
               "where d.chunk_count <> (select count(*) from chunks c where c.document_id=d.id)"))
    print("chunks without a document:", psql("select count(*) from chunks c where not exists (select 1 from documents d where d.id=c.document_id)"))
    print("drain documents stored:", psql("select uri, chunk_count from documents where uri like 'drain-%'"))
    print("analyses left running:", psql("select id, status from analyses where status='running'"))


if __name__ == "__main__":
    main()
