"""The pod check's parts that are not the pod: its report, commands, HTTP, and the two things it runs
beside the pod, a real registry (Debian's docker-registry) and a scripted model (the stand-in)."""
import base64
import json
import os
import re
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import yaml

def say(msg):
    print(f"pod-check: {msg}", flush=True)


class Results:
    """Each check's outcome, printed as it comes and summed up at the end."""

    def __init__(self):
        self.items = []

    def ok(self, name, detail=""):
        self.items.append((True, name, detail))
        say(f"PASS {name}" + (f": {detail}" if detail else ""))

    def fail(self, name, detail):
        self.items.append((False, name, detail))
        say(f"FAIL {name}: {detail}")

    def check(self, condition, name, passed, failed):
        (self.ok if condition else self.fail)(name, passed if condition else failed)
        return condition

    def failed(self):
        return [i for i in self.items if not i[0]]


class Fatal(Exception):
    """A check whose failure leaves nothing after it to check."""


def run(cmd, check=True, env=None, stdin=None, timeout=600):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, input=stdin, timeout=timeout)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {(p.stdout + p.stderr).strip()[-2000:]}")
    return p


def quantity(q):
    """Bytes of a Kubernetes quantity (16Mi, 1Gi, 2G, 512M, 300)."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([KMGTE]i?)?", str(q).strip())
    if not m:
        raise ValueError(f"not a quantity: {q}")
    unit = m.group(2) or ""
    power = {"K": 1, "M": 2, "G": 3, "T": 4, "E": 6}.get(unit[:1], 0)
    return int(float(m.group(1)) * ((1024 if unit.endswith("i") else 1000) ** power))


def cpus(q):
    q = str(q)
    return float(q[:-1]) / 1000 if q.endswith("m") else float(q)


class ScriptedModel:
    """An OpenAI-compatible chat endpoint that runs one program, then answers; its second turn waits
    until the check has looked inside the sandbox (so that the sandbox is there to look at)."""

    def __init__(self, port, code):
        self.code = code
        self.looked = threading.Event()
        self.tool_results = []
        self.requests = 0
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # the model client keeps its connections

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                if "tools" not in body:
                    reply = {"role": "assistant", "content": "stand-in llm() reply"}
                    finish = "stop"
                else:
                    model.requests += 1
                    results = [m["content"] for m in body["messages"] if m.get("role") == "tool"]
                    if not results:
                        reply = {"role": "assistant", "content": None, "tool_calls": [{
                            "id": "call_1", "type": "function",
                            "function": {"name": "execute_code", "arguments": json.dumps({"code": model.code})}}]}
                        finish = "tool_calls"
                    else:
                        model.tool_results = [json.loads(r) for r in results]
                        model.looked.wait(120)
                        reply = {"role": "assistant", "content": json.dumps(
                            {"answer": "The scoped document is the only one the sandbox saw.", "program": model.code})}
                        finish = "stop"
                data = json.dumps({"id": "chatcmpl-pod-check", "object": "chat.completion", "created": int(time.time()),
                                   "model": "scripted", "choices": [{"index": 0, "message": reply, "finish_reason": finish}],
                                   "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.looked.set()
        self.server.shutdown()
        self.server.server_close()


class Registry:
    """Debian's docker-registry on a loopback port, behind basic authentication."""

    def __init__(self, work, port, user, password):
        self.address = f"127.0.0.1:{port}"
        self.user, self.password = user, password
        d = work / "registry"
        d.mkdir()
        (d / "htpasswd").write_text(run(["htpasswd", "-nbB", user, password]).stdout)
        (d / "config.yml").write_text(yaml.safe_dump({
            "version": 0.1, "log": {"level": "warn"}, "storage": {"filesystem": {"rootdirectory": str(d / "storage")}},
            "http": {"addr": self.address, "secret": "pod-check"},
            "auth": {"htpasswd": {"realm": "pod-check", "path": str(d / "htpasswd")}}}))
        self.log = open(d / "registry.log", "w")
        self.process = subprocess.Popen(["docker-registry", "serve", str(d / "config.yml")], stdout=self.log,
                                        stderr=subprocess.STDOUT)
        self.config = d / "docker-config"
        self.config.mkdir()
        wait_for(lambda: http_status(f"http://{self.address}/v2/") == 401, 30, "the registry to answer")
        run(["docker", "login", "-u", user, "--password-stdin", self.address], env=self.env(), stdin=password)

    def env(self):
        return dict(os.environ, DOCKER_CONFIG=str(self.config))

    def push(self, source, target):
        run(["docker", "tag", source, target])
        run(["docker", "push", "-q", target], env=self.env())

    def dockerconfigjson(self):
        auth = base64.b64encode(f"{self.user}:{self.password}".encode()).decode()
        return json.dumps({"auths": {self.address: {"auth": auth}}})

    def close(self):
        self.process.terminate()
        self.process.wait(10)
        self.log.close()


def http_status(url, timeout=3):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return None


def http_json(method, url, body=None, token=None, timeout=60, content_type="application/json"):
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", content_type)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            raw = r.read()
            return r.status, (json.loads(raw) if raw[:1] in (b"{", b"[") else raw.decode())
    except urllib.error.HTTPError as e:
        raw = e.read()
        return e.code, (json.loads(raw) if raw[:1] in (b"{", b"[") else raw.decode())


def multipart(path):
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{path.name}\"\r\n"
            f"Content-Type: application/octet-stream\r\n\r\n").encode() + path.read_bytes() + f"\r\n--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


def wait_for(condition, seconds, what, alive=None):
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value:
            return value
        if alive is not None and not alive():
            raise Fatal(f"gave up waiting for {what}: the container exited")
        if time.monotonic() > deadline:
            raise Fatal(f"{what}: not within {seconds} s")
        time.sleep(0.5)


def ports(n):
    base = os.environ.get("POD_CHECK_PORT_BASE")
    if base:
        return [int(base) + i for i in range(n)]
    out = []
    for _ in range(n):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            out.append(s.getsockname()[1])
    return out
