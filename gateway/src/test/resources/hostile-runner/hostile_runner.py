"""A hostile runner: what sandbox code that escaped the language could do with the runner's stream.

It speaks quarry.sandbox.v1 as the real runner does (Ready, then one CellResult per cell), but a
cell's first line is a directive, not Python:
  #search QUERY          one search(QUERY, limit=3); prints hits=N (a well-behaved cell)
  #flood N KIND LIMIT    N callbacks at once (KIND search, list_documents or llm; search with LIMIT,
                         llm with the prompt "hello");
                         prints ok=.. LimitExceeded=.. other=.. when every reply is in
  #hold                  holds the sandbox, doing nothing, until cancelled or its wall time is up
  #stall N LIMIT         N search(limit=LIMIT) calls at once, then never reads the stream again
  #forge N OUT           ignores every size limit: OUT characters of output (one chunk), then an
                         error result whose type, message, traceback and value are N characters each
                         and whose duration is a day
  #echo TEXT             prints TEXT as it is (one chunk), whatever its size
  #bigcall N KIND        one KIND (llm or search) callback whose argument is N characters; prints
                         KIND=<error type or ok>: <message>
  #orphan CELL           one search naming cell CELL ("-" for none) instead of its own; prints the reply
  #fileread N ID...      N FileRead notices of made-up document ids, then one of each ID's content.txt
Tests build it into an image of its own (HostileRunner); it never ships.
"""
import collections
import itertools
import json
import os
import queue
import sys
import threading
import time
import uuid

import grpc
from quarry.sandbox.v1 import sandbox_pb2 as pb
from quarry.sandbox.v1 import sandbox_pb2_grpc

_END = object()
MAX_MESSAGE_BYTES = 16 * 1024 * 1024


class Hostile:
    def __init__(self, stub):
        self.stub = stub
        self.outbox = queue.Queue()
        self.cells = queue.Queue()
        self.reading = threading.Event()
        self.reading.set()
        self.lock = threading.Condition()
        self.replies = {}  # call_id -> reply
        self.cancelled = set()
        self.ids = itertools.count(1)

    def send(self, **kind):
        self.outbox.put(pb.SandboxMessage(**kind))

    def run(self):
        responses = self.stub.Connect(iter(self.outbox.get, _END))
        self.send(ready=pb.Ready(runner_version="hostile", startup_ms=0))
        threading.Thread(target=self.read, args=(responses,), daemon=True).start()
        while (request := self.cells.get()) is not _END:
            self.execute(request)

    def read(self, responses):
        try:
            while True:
                self.reading.wait()
                message = next(responses)
                kind = message.WhichOneof("kind")
                if kind == "execute":
                    self.cells.put(message.execute)
                elif kind == "callback_reply":
                    with self.lock:
                        self.replies[message.callback_reply.call_id] = message.callback_reply
                        self.lock.notify_all()
                elif kind == "cancel":
                    with self.lock:
                        self.cancelled.add(message.cancel.cell_id)
                        self.lock.notify_all()
        except Exception as e:
            print(f"hostile-runner: stream ended: {e!r}", file=sys.stderr)
        finally:
            self.cells.put(_END)

    def call(self, cell_id, kind, arguments):
        call_id = f"h{next(self.ids)}"
        self.send(callback=pb.CallbackRequest(cell_id=cell_id, call_id=call_id, kind=kind,
                                              arguments_json=json.dumps(arguments)))
        return call_id

    def wait(self, call_ids, deadline, cell_id):
        with self.lock:
            while not all(c in self.replies for c in call_ids):
                left = deadline - time.monotonic()
                if left <= 0 or cell_id in self.cancelled:
                    return None
                self.lock.wait(min(left, 0.5))
            return [self.replies.pop(c) for c in call_ids]

    def output(self, cell_id, text):
        self.send(output=pb.OutputChunk(cell_id=cell_id, channel=pb.OUTPUT_CHANNEL_STDOUT, text=text))

    def result(self, cell_id, status, started, error_type="", message=""):
        self.send(result=pb.CellResult(cell_id=cell_id, status=status, error_type=error_type,
                                       error_message=message,
                                       duration_ms=int((time.monotonic() - started) * 1000)))

    def search_reply(self, cell, call, deadline, started):
        """Waits for one search's reply; prints hits=N or error=TYPE: MESSAGE and ends the cell."""
        replies = self.wait([call], deadline, cell)
        if replies is None:
            return self.result(cell, pb.CELL_STATUS_TIMEOUT, started, "Timeout", "no reply in time")
        reply = replies[0]
        if reply.WhichOneof("outcome") == "error":
            self.output(cell, f"error={reply.error.type}: {reply.error.message}\n")
        else:
            self.output(cell, f"hits={len(json.loads(reply.result_json))}\n")
        return self.result(cell, pb.CELL_STATUS_OK, started)

    def execute(self, request):
        started = time.monotonic()
        deadline = started + (request.limits.wall_time_ms or 30000) / 1000
        cell = request.cell_id
        words = request.code.split("\n", 1)[0].split()
        directive = words[0] if words else ""
        if directive == "#search":
            call = self.call(cell, pb.CALLBACK_KIND_SEARCH, {"query": " ".join(words[1:]), "limit": 3})
            return self.search_reply(cell, call, deadline, started)
        if directive == "#flood":
            n, kind, limit = int(words[1]), words[2], int(words[3])
            kinds = {"search": (pb.CALLBACK_KIND_SEARCH, {"query": "ferry timetable", "limit": limit}),
                     "list_documents": (pb.CALLBACK_KIND_LIST_DOCUMENTS, {}),
                     "llm": (pb.CALLBACK_KIND_LLM, {"prompt": "hello"})}
            calls = [self.call(cell, *kinds[kind]) for _ in range(n)]
            replies = self.wait(calls, deadline, cell)
            if replies is None:
                return self.result(cell, pb.CELL_STATUS_TIMEOUT, started, "Timeout", "not every reply came in time")
            counts = collections.Counter(
                "ok" if r.WhichOneof("outcome") == "result_json" else r.error.type for r in replies)
            self.output(cell, " ".join(f"{k}={counts[k]}" for k in sorted(counts)) + "\n")
            return self.result(cell, pb.CELL_STATUS_OK, started)
        if directive == "#hold":
            self.output(cell, "holding\n")
            with self.lock:
                while cell not in self.cancelled and time.monotonic() < deadline:
                    self.lock.wait(0.5)
                if cell in self.cancelled:
                    return self.result(cell, pb.CELL_STATUS_CANCELLED, started, "Cancelled", "cancelled")
            return self.result(cell, pb.CELL_STATUS_TIMEOUT, started, "Timeout", "held until the wall time")
        if directive == "#forge":
            n, out = int(words[1]), int(words[2])
            if out:
                self.output(cell, "o" * out)
            return self.send(result=pb.CellResult(
                cell_id=cell, status=pb.CELL_STATUS_ERROR, error_type="T" * n, error_message="m" * n,
                traceback="t" * n, value_repr="v" * n, duration_ms=86_400_000))
        if directive == "#echo":
            self.output(cell, request.code.split("\n", 1)[0][len("#echo "):])
            return self.result(cell, pb.CELL_STATUS_OK, started)
        if directive == "#bigcall":
            n, kind = int(words[1]), words[2]
            call = self.call(cell, pb.CALLBACK_KIND_LLM if kind == "llm" else pb.CALLBACK_KIND_SEARCH,
                             {"prompt": "p" * n} if kind == "llm" else {"query": "q" * n, "limit": 3})
            replies = self.wait([call], deadline, cell)
            if replies is None:
                return self.result(cell, pb.CELL_STATUS_TIMEOUT, started, "Timeout", "no reply in time")
            reply = replies[0]
            if reply.WhichOneof("outcome") == "error":
                self.output(cell, f"{kind}={reply.error.type}: {reply.error.message}\n")
            else:
                self.output(cell, f"{kind}=ok: {len(reply.result_json)} characters\n")
            return self.result(cell, pb.CELL_STATUS_OK, started)
        if directive == "#stall":
            n, limit = int(words[1]), int(words[2])
            self.reading.clear()
            for _ in range(n):
                self.call(cell, pb.CALLBACK_KIND_SEARCH, {"query": "ferry timetable", "limit": limit})
            self.output(cell, f"stalled after {n} calls\n")
            threading.Event().wait()  # never answers, never reads again
        if directive == "#orphan":
            other = "" if words[1] == "-" else words[1]
            call = self.call(other, pb.CALLBACK_KIND_SEARCH, {"query": "ferry timetable", "limit": 3})
            return self.search_reply(cell, call, deadline, started)
        if directive == "#fileread":
            n, ids = int(words[1]), words[2:]
            for _ in range(n):
                self.send(file_read=pb.FileRead(cell_id=cell, path=f"/documents/{uuid.uuid4()}/content.txt"))
            for doc in ids:
                self.send(file_read=pb.FileRead(cell_id=cell, path=f"/documents/{doc}/content.txt"))
            self.output(cell, f"read {n + len(ids)}\n")
            return self.result(cell, pb.CELL_STATUS_OK, started)
        return self.result(cell, pb.CELL_STATUS_ERROR, started, "ValueError", f"unknown directive {directive!r}")


def main():
    socket_path = os.environ.get("QUARRY_SOCKET", "/run/quarry/sandbox.sock")
    options = [("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
               ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES)]
    with grpc.insecure_channel(f"unix://{socket_path}", options=options) as channel:
        try:
            Hostile(sandbox_pb2_grpc.SandboxStub(channel)).run()
        except grpc.RpcError as e:
            print(f"hostile-runner: {e.code()}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
