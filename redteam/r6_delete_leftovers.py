"""R6-5: what a tenant's deletion leaves on the gateway's disk.

1. Always: documents/.state/<tenant>/ (one version marker per document, named by its id) is never
   removed (AdminRoutes.deleteTenant removes documents/<tenant> only).
2. Racing: the deletion removes documents/<tenant> at once, outside the tenant's queue of file
   writes (DocumentsFs.inTurn); an ingest that committed just before the rows went, or a sync
   already queued, writes its files afterwards: documents/<tenant>/<doc>/content.txt of a deleted
   tenant comes back, and nothing ever removes it.

    TRIALS=5 THREADS=3 python3 r6_delete_leftovers.py
Each trial: a fresh tenant, THREADS threads ingesting small text documents (SIZE sentences) back to back and
executions (each start syncs /documents), the tenant deleted after DELAY s; then its files are listed.
"""
import os, subprocess, threading, time
import r6_rt as rt

TRIALS = int(os.environ.get("TRIALS", "5"))
THREADS = int(os.environ.get("THREADS", "3"))
SIZE = int(os.environ.get("SIZE", "40"))
DELAY = float(os.environ.get("DELAY", "3"))
ROOT = os.path.join(rt.VAR, "data-%d" % rt.PORT, "documents")


def files(tid):
    out = subprocess.run("find %s/%s %s/.state/%s -type f 2>/dev/null" % (ROOT, tid, ROOT, tid), shell=True,
                         capture_output=True, text=True).stdout.split()
    content = [f for f in out if f.endswith("content.txt")]
    return len(out), content


def trial(n):
    tid, k = rt.new_tenant("r6race")
    stop = [False]
    counts = {}

    def ingester(i):
        j = 0
        while not stop[0]:
            j += 1
            try:
                st, _, _ = rt.req("POST", "/v1/documents", {"content": ("Trial %d thread %d doc %d: revenue grew. " % (n, i, j)) * SIZE,
                                                           "uri": "t%d-%d" % (i, j)}, k=k, timeout=60)
            except Exception as e:
                st = type(e).__name__
            counts[st] = counts.get(st, 0) + 1

    def executor():
        while not stop[0]:
            try:
                st, _, _ = rt.execute("print(1)", k=k, timeout=60)
            except Exception as e:
                st = type(e).__name__
            counts["exec %s" % st] = counts.get("exec %s" % st, 0) + 1
            time.sleep(0.3)

    ts = [threading.Thread(target=ingester, args=(i,)) for i in range(THREADS)] + [threading.Thread(target=executor)]
    [t.start() for t in ts]
    time.sleep(DELAY)
    st, _, dt = rt.admin("DELETE", "/v1/admin/tenants/" + tid)
    deleted_at = time.time()
    time.sleep(1.5)
    stop[0] = True
    [t.join() for t in ts]
    time.sleep(3)
    nfiles, content = files(tid)
    print("trial %d: tenant %s deleted (%s in %.2fs); requests %s; 5 s later on disk: %d files, %d content.txt%s" % (
        n, tid[:8], st, dt, counts, nfiles, len(content), (" e.g. " + content[0][len(ROOT):]) if content else ""), flush=True)
    return len(content)


def main():
    resurrected = sum(1 for n in range(TRIALS) if trial(n))
    print("%d of %d trials left a deleted tenant's document text on disk" % (resurrected, TRIALS))


if __name__ == "__main__":
    main()
