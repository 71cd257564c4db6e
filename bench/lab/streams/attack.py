#!/usr/bin/env python3
"""Issue 33's two attacks on a gateway run by hand, and a quiet tenant's searches beside them.

setup: two tenants (noisy, quiet); the quiet one ingests 12 small documents; the noisy one gets a
10 MB document written straight into the database (documents and items rows, as an ingest would
leave them, without chunks: nothing searches it). Writes the keys and ids to a state file.

run items: the noisy tenant keeps N connections asking for that document's items and reading
nothing (a cut one is opened again at once); bodies: it keeps 32 POST /v1/documents with JSON
bodies of 49 MiB held open (all but the last KiB sent). Meanwhile the quiet tenant searches;
after that the gateway's heap after a full GC is read with jcmd, a few times.
"""
import argparse, json, os, socket, struct, subprocess, sys, threading, time, uuid
import http.client

def req(port, method, path, key=None, body=None, admin=None, timeout=60):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    h = {"Content-Type": "application/json"}
    if key: h["Authorization"] = "Bearer " + key
    if admin: h["Authorization"] = "Bearer " + admin
    c.request(method, path, body=None if body is None else json.dumps(body), headers=h)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data

def setup(a):
    st = {}
    for name in ("noisy", "quiet"):
        s, d = req(a.port, "POST", "/v1/admin/tenants", body={"name": name + "-" + uuid.uuid4().hex[:6]}, admin=a.admin)
        assert s == 201, (s, d)
        t = json.loads(d)
        st[name] = {"id": t["id"], "key": t["api_key"]}
        s, d = req(a.port, "PUT", "/v1/admin/tenants/%s/quotas" % t["id"], body={"requests_per_minute": 100000}, admin=a.admin)
        assert s == 200, (s, d)
    topics = ["tides and harbours", "berths and cranes", "grain exports", "container volumes", "pilotage fees",
              "dredging works", "rail links", "customs clearance", "storage yards", "ferry routes", "fuel bunkering", "tug services"]
    for i, t in enumerate(topics):
        text = "# Port report %d: %s\n\n" % (i, t) + "\n\n".join(
            "The port's %s in quarter %d rose by %d percent, with %d vessels and %d tonnes handled." % (t, q, q * 3 + i, 40 + q * i, 1000 * q + i)
            for q in range(1, 40))
        s, d = req(a.port, "POST", "/v1/documents", key=st["quiet"]["key"], body={"title": "Port %d" % i, "uri": "port/%d" % i, "content": text})
        assert s in (200, 201), (s, d)
    # The noisy tenant's 10 MB document, straight into the database as the owner.
    doc = str(uuid.uuid4())
    n = 20000
    sql = f"""
SET quarry.all_tenants = on;
INSERT INTO documents (id, tenant_id, title, uri, source_type, content_hash, byte_size, content, toc, item_count, chunk_count)
SELECT '{doc}', '{st['noisy']['id']}', 'Big', 'big.txt', 'text', md5(random()::text), 10000000,
  string_agg(repeat('lorem ipsum dolor sit amet ' || g || ' ', 18), E'\\n\\n' ORDER BY g), '{{"tree": []}}', {n}, 0
FROM generate_series(0, {n - 1}) g;
INSERT INTO items (tenant_id, document_id, position, self_ref, label, text, page_numbers, heading_level, tree_depth, section_start, section_end)
SELECT '{st['noisy']['id']}', '{doc}', g, '#/texts/' || g, 'text', repeat('lorem ipsum dolor sit amet ' || g || ' ', 18), '{{}}', 0, 1, 0, {n}
FROM generate_series(0, {n - 1}) g;
"""
    env = dict(os.environ, PGPASSWORD="quarry")
    subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-U", "quarry", "-d", a.db, "-c", sql], check=True, env=env)
    st["noisy"]["doc"] = doc
    json.dump(st, open(a.state, "w"), indent=1)
    print("setup done", st)

def tcp_state(s):
    try:
        return struct.unpack("B", s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1))[0]
    except OSError:
        return 0

class Attack:
    def __init__(self, a, st):
        self.a, self.st, self.stop = a, st, False
        self.opened = 0
        self.ok = set()
        self.socks = []

    def open_one(self):
        s = socket.socket()
        # A client that reads nothing advertises a small window: the kernels then hold little of what
        # the gateway writes (over loopback they would otherwise take up to tcp_rmem's 32 MiB).
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
        s.connect(("127.0.0.1", self.a.port))
        key = self.st["noisy"]["key"]
        if self.a.scenario == "items":
            s.sendall(("GET /v1/documents/%s/items HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n"
                       % (self.st["noisy"]["doc"], key)).encode())
        else:
            size = 49 * 1024 * 1024
            s.sendall(("POST /v1/documents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"
                       "Content-Length: %d\r\n\r\n" % (key, size)).encode())
            head = b'{"uri": "held", "content": "'
            s.sendall(head)
            chunk = b"a" * (1 << 20)
            left = size - len(head) - 1024
            while left > 0:
                n = min(left, len(chunk))
                s.sendall(chunk[:n])
                left -= n
        self.opened += 1
        return s

    def status(self, s):
        """The answer's status line, peeked at without reading it (None while nothing came)."""
        try:
            head = s.recv(12, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except BlockingIOError:
            return None
        except OSError:
            return "closed"
        return head.decode("latin-1") if head else "closed"

    def run(self):
        """Keeps N requests whose answer is a 200 the attacker never reads; a refused, failed or cut one
        is asked again. Items: at most 8 asked and unanswered at once, so that the gateway's pool
        serves them (all at once, most time out waiting for a connection and cost it nothing)."""
        n = self.a.connections if self.a.scenario == "items" else 32
        if self.a.scenario == "bodies":
            # All 32 at once, each in a thread of its own, then held open (the body's last KiB never sent).
            self.socks = [None] * n
            def one(i):
                self.socks[i] = self.open_one()
            threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            self.held = sum(1 for s in self.socks if s is not None and tcp_state(s) == 1)
            while not self.stop:
                time.sleep(0.2)
            for s in self.socks:
                if s is not None:
                    s.close()
            return
        self.socks = [None] * n
        self.born = [0.0] * n
        self.ok = set()
        while not self.stop:
            pending = 0
            for i, s in enumerate(self.socks):
                st = None if s is None else self.status(s)
                # A gateway that cuts unread answers does so silently (the client cannot see it without
                # reading): an attacker who knows the cut comes back after --reopen-after seconds.
                old = self.a.reopen_after and time.time() - self.born[i] > self.a.reopen_after
                if s is not None and (old or st == "closed" or tcp_state(s) != 1 or (st and len(st) >= 12 and st[9:12] != "200")):
                    s.close()
                    self.socks[i] = s = None
                    self.ok.discard(i)
                if s is None:
                    if self.a.scenario == "items" and pending >= 8:
                        continue
                    try:
                        self.socks[i] = self.open_one()
                        self.born[i] = time.time()
                        pending += 1
                    except OSError:
                        pass
                elif st is None:
                    pending += 1
                elif st[9:12] == "200":
                    self.ok.add(i)
            time.sleep(0.2)
        for s in self.socks:
            if s is not None:
                s.close()

def searches(a, st, n):
    out, failed = [], 0
    qs = ["tides quarter 3", "berths cranes vessels", "grain exports tonnes", "pilotage fees", "ferry routes percent"]
    for i in range(n):
        t0 = time.perf_counter()
        try:
            s, d = req(a.port, "POST", "/v1/search", key=st["quiet"]["key"], body={"query": qs[i % len(qs)], "limit": 5}, timeout=120)
            if s != 200:
                failed += 1
        except Exception:
            failed += 1
        out.append((time.perf_counter() - t0) * 1000)
    out.sort()
    pct = lambda p: out[min(len(out) - 1, int(round(p * (len(out) - 1))))]
    return {"n": n, "p50": round(pct(0.5), 1), "p95": round(pct(0.95), 1), "max": round(out[-1], 1), "failed": failed}

def memory(pid):
    """Heap used after a full GC, the JVM's native 'Other' (direct buffers, with NMT on) and RSS, in MiB."""
    heap = heap_after_gc(pid)
    other = None
    nmt = subprocess.run(["jcmd", str(pid), "VM.native_memory", "summary"], capture_output=True, text=True).stdout
    for line in nmt.splitlines():
        if line.strip().startswith("-") and "Other (" in line:
            other = int(line.split("committed=")[1].split("KB")[0]) // 1024
    rss = int(open("/proc/%d/status" % pid).read().split("VmRSS:")[1].split()[0]) // 1024
    return {"heap_after_gc": heap, "native_other": other, "rss": rss}

def heap_after_gc(pid):
    subprocess.run(["jcmd", str(pid), "GC.run"], capture_output=True)
    info = subprocess.run(["jcmd", str(pid), "GC.heap_info"], capture_output=True, text=True).stdout
    # G1: " garbage-first heap   total reserved 2355200K, committed 1048576K, used 123456K"
    for line in info.splitlines():
        if "used" in line and "heap" in line:
            used = line.split("used")[1].strip().split("K")[0].strip()
            return int(used) // 1024
    return None

def run(a):
    st = json.load(open(a.state))
    print("quiet alone:", searches(a, st, a.searches), flush=True)
    print("memory alone (MiB):", memory(a.pid), flush=True)
    atk = Attack(a, st)
    th = threading.Thread(target=atk.run, daemon=True)
    th.start()
    t0 = time.time()
    while time.time() - t0 < a.settle or (a.scenario == "bodies" and not hasattr(atk, "held")):
        time.sleep(1)
    print("attack: %d requests answered 200 and unread, %d opened, %s bodies held, after %.0f s"
          % (len(atk.ok), atk.opened, getattr(atk, "held", "-"), time.time() - t0), flush=True)
    print("quiet under attack:", searches(a, st, a.searches), flush=True)
    print("attack: %d answered 200 and unread, %d opened" % (len(atk.ok), atk.opened), flush=True)
    for _ in range(3):
        print("memory under attack (MiB):", memory(a.pid), "unread 200s:", len(atk.ok), flush=True)
        time.sleep(6)
    atk.stop = True
    th.join()
    print("attack connections opened:", atk.opened)

if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("cmd", choices=["setup", "run"])
    p.add_argument("--port", type=int, default=18200)
    p.add_argument("--admin", default="stream-bench-admin-token-0123")
    p.add_argument("--db", default="quarry_stream_bench")
    p.add_argument("--state", default="/tmp/stream-bench/state.json")
    p.add_argument("--pid", type=int)
    p.add_argument("--scenario", choices=["items", "bodies"], default="items")
    p.add_argument("--connections", type=int, default=200)
    p.add_argument("--searches", type=int, default=60)
    p.add_argument("--settle", type=float, default=30)
    p.add_argument("--reopen-after", type=float, default=0)
    a = p.parse_args()
    setup(a) if a.cmd == "setup" else run(a)
