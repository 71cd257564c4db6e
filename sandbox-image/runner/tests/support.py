"""Shared set-up for the runner tests: import paths, generated stubs, a documents tree."""
import functools
import importlib.util
import json
import os
import pathlib
import sys
import tempfile

RUNNER_DIR = pathlib.Path(__file__).resolve().parents[1]
REPO_ROOT = RUNNER_DIR.parents[1]
PROTO_ROOT = REPO_ROOT / "proto" / "src" / "main" / "proto"
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
# Debian's python3-grpcio / python3-protobuf / python3-grpc-tools, as in the image; another
# python3 first on PATH (pyenv) does not see them by default.
DEBIAN_PACKAGES = "/usr/lib/python3/dist-packages"

if str(RUNNER_DIR) not in sys.path:
    sys.path.insert(0, str(RUNNER_DIR))
if importlib.util.find_spec("grpc") is None:  # find, not import: the corpus workers start faster
    sys.path.append(DEBIAN_PACKAGES)


@functools.lru_cache(maxsize=None)
def generated_stubs():
    """Generates the Python stubs from the .proto, as the image build does; returns their dir."""
    from grpc_tools import protoc

    out = tempfile.mkdtemp(prefix="quarry-stubs-")
    proto = PROTO_ROOT / "quarry" / "sandbox" / "v1" / "sandbox.proto"
    status = protoc.main(["protoc", f"-I{PROTO_ROOT}", f"--python_out={out}", f"--grpc_python_out={out}", str(proto)])
    if status != 0:
        raise RuntimeError(f"protoc failed with status {status} on {proto}")
    sys.path.insert(0, out)
    return out


def make_documents(root):
    """A small /documents tree: two documents, plus a secret beside the root and escape symlinks."""
    root = pathlib.Path(root)
    docs = root / "documents"
    for doc_id, title, text in (("doc-1", "Alpha", "alpha text\n"), ("doc-2", "Beta", "beta text\n")):
        folder = docs / doc_id
        folder.mkdir(parents=True)
        (folder / "metadata.json").write_text(json.dumps(
            {"id": doc_id, "title": title, "uri": f"file:///{doc_id}.md", "created_at": "2024-01-01T00:00:00Z"}))
        (folder / "content.txt").write_text(text)
    secret = root / "other-tenant" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("CANARY-OTHER-TENANT")
    os.symlink(secret, docs / "doc-1" / "escape-file")
    os.symlink(secret.parent, docs / "doc-1" / "escape-dir")
    os.symlink("/etc/passwd", docs / "doc-2" / "passwd")
    return docs


def run(executor, code, **limits):
    """Runs one cell; returns (outcome, stdout, stderr)."""
    out = {"stdout": [], "stderr": []}
    outcome = executor.run_cell(code, lambda channel, text: out[channel].append(text), **limits)
    return outcome, "".join(out["stdout"]), "".join(out["stderr"])


class FakeGateway:
    """Serves callbacks in-process with canned answers and records the calls.

    answer(kind, arguments) gives the result, raises the callback's error, or returns NO_REPLY for a
    gateway that never answers; the reply comes at once, on the calling thread.
    """
    NO_REPLY = object()

    def __init__(self, answer=None):
        self.calls = []
        self._answer = answer or self.canned

    def __call__(self, kind, arguments, reply):
        self.calls.append((kind, arguments))
        try:
            result = self._answer(kind, arguments)
        except Exception as e:
            reply(error=e)
            return
        if result is not self.NO_REPLY:
            reply(result=result)

    @staticmethod
    def canned(kind, arguments):
        if kind == "search":
            return [{"chunk_id": "c1", "content": f"hit for {arguments['query']}", "score": 1.0}]
        if kind == "list_documents":
            return [{"id": "doc-1", "title": "Alpha", "uri": "file:///doc-1.md", "created_at": "2024-01-01T00:00:00Z"}]
        return f"completion of {arguments['prompt']!r}"
