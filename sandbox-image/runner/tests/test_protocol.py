"""The runner against stubs generated from proto/.../sandbox.proto, as the image build makes them.

A fake gateway (a Python gRPC server on a Unix socket in a temp directory, like the gateway's
per-sandbox directory) drives a real Session: if the runner used a message, field or enum value
the .proto does not have, these tests fail.
"""
import concurrent.futures
import json
import queue
import re
import shutil
import tempfile
import threading
import time
import unittest

import support

support.generated_stubs()

import grpc  # noqa: E402
from quarry.sandbox.v1 import sandbox_pb2 as pb, sandbox_pb2_grpc  # noqa: E402
from quarry_runner.session import Session  # noqa: E402

PROTO_FILE = support.PROTO_ROOT / "quarry" / "sandbox" / "v1" / "sandbox.proto"
WAIT_SECONDS = 20


class ProtoFile(unittest.TestCase):
    def test_every_enum_starts_with_unspecified_zero(self):
        for enum in pb.DESCRIPTOR.enum_types_by_name.values():
            with self.subTest(enum.name):
                zero = enum.values_by_number[0].name
                self.assertTrue(zero.endswith("_UNSPECIFIED"), zero)

    def test_every_message_and_field_has_a_comment(self):
        lines = PROTO_FILE.read_text().splitlines()
        declaration = re.compile(r"^\s*(message|enum|oneof|rpc|service)\s|^\s*(repeated\s+)?[\w.]+\s+\w+\s*=\s*\d+;|^\s*[A-Z_]+\s*=\s*\d+;")
        for number, line in enumerate(lines):
            if declaration.match(line):
                with self.subTest(line.strip()):
                    self.assertTrue(lines[number - 1].strip().startswith("//"), f"line {number + 1} has no comment")

    def test_oneofs_are_the_closed_sets_the_runner_handles(self):
        self.assertEqual([f.name for f in pb.SandboxMessage.DESCRIPTOR.oneofs_by_name["kind"].fields],
                         ["ready", "output", "callback", "file_read", "result"])
        self.assertEqual([f.name for f in pb.GatewayMessage.DESCRIPTOR.oneofs_by_name["kind"].fields],
                         ["execute", "callback_reply", "cancel"])


class FakeGateway(sandbox_pb2_grpc.SandboxServicer):
    """Records what the runner sends; the test thread decides what to send back."""

    def __init__(self):
        self.received = queue.Queue()
        self.outgoing = queue.Queue()

    def Connect(self, request_iterator, context):
        def drain():
            for message in request_iterator:
                self.received.put(message)
        threading.Thread(target=drain, daemon=True).start()
        while (message := self.outgoing.get()) is not None:
            yield message

    def next(self, kind):
        message = self.received.get(timeout=WAIT_SECONDS)
        self.assert_kind(message, kind)
        return getattr(message, kind)

    @staticmethod
    def assert_kind(message, kind):
        if message.WhichOneof("kind") != kind:
            raise AssertionError(f"expected {kind}, got {message}")


class SessionOverUnixSocket(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="quarry-sock-")
        self.documents = support.make_documents(self.dir)
        self.socket = f"{self.dir}/sandbox.sock"
        self.gateway = FakeGateway()
        self.server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=4))
        sandbox_pb2_grpc.add_SandboxServicer_to_server(self.gateway, self.server)
        self.server.add_insecure_port(f"unix://{self.socket}")
        self.server.start()

    def tearDown(self):
        self.server.stop(grace=None)
        shutil.rmtree(self.dir)

    def run_session(self, script, **session_options):
        """Runs the runner's Session on this (main) thread while `script` plays the gateway."""
        failures = []

        def play():
            try:
                script(self.gateway)
            except BaseException as e:  # reported on the main thread below
                failures.append(e)
            finally:
                self.gateway.outgoing.put(None)  # close the stream: the session ends
        threading.Thread(target=play, daemon=True).start()
        with grpc.insecure_channel(f"unix://{self.socket}") as channel:
            Session(sandbox_pb2_grpc.SandboxStub(channel), str(self.documents), time.monotonic(),
                    **session_options).run()
        if failures:
            raise failures[0]

    @staticmethod
    def execute(cell_id, code, **limits):
        return pb.GatewayMessage(execute=pb.ExecuteRequest(cell_id=cell_id, code=code, limits=pb.CellLimits(**limits)))

    def test_ready_then_cells_with_output_callbacks_and_one_result_each(self):
        seen = {}

        def script(gw):
            seen["ready"] = gw.next("ready")
            gw.outgoing.put(self.execute("c1", "print('before')\nhits = await search('engines', limit=2)\nprint(hits[0]['id'])\nlen(hits)"))
            seen["before"] = gw.next("output")
            call = gw.next("callback")
            seen["call"] = call
            gw.outgoing.put(pb.GatewayMessage(callback_reply=pb.CallbackReply(
                call_id=call.call_id, result_json=json.dumps([{"id": "h1"}, {"id": "h2"}]))))
            seen["after"] = gw.next("output")
            seen["c1"] = gw.next("result")
            gw.outgoing.put(self.execute("c2", "from pathlib import Path\nlen(Path('/documents/doc-1/content.txt').read_text())"))
            seen["read"] = gw.next("file_read")
            seen["c2"] = gw.next("result")

        self.run_session(script)
        self.assertEqual(seen["ready"].runner_version, "1")
        self.assertEqual((seen["before"].cell_id, seen["before"].channel, seen["before"].text),
                         ("c1", pb.OUTPUT_CHANNEL_STDOUT, "before\n"))
        self.assertEqual(seen["call"].kind, pb.CALLBACK_KIND_SEARCH)
        self.assertEqual(json.loads(seen["call"].arguments_json), {"query": "engines", "limit": 2})
        self.assertEqual(seen["after"].text, "h1\n")
        self.assertEqual((seen["c1"].cell_id, seen["c1"].status, seen["c1"].value_repr), ("c1", pb.CELL_STATUS_OK, "2"))
        self.assertEqual((seen["read"].cell_id, seen["read"].path), ("c2", "/documents/doc-1/content.txt"))
        self.assertEqual(seen["c2"].value_repr, "11")

    def test_a_callback_error_is_raised_in_the_cell_with_its_type(self):
        seen = {}

        def script(gw):
            gw.next("ready")
            gw.outgoing.put(self.execute("c1", "try:\n    await llm('x')\nexcept LimitExceeded as e:\n    print('limit:', e)"))
            call = gw.next("callback")
            gw.outgoing.put(pb.GatewayMessage(callback_reply=pb.CallbackReply(
                call_id=call.call_id, error=pb.CallbackError(type="LimitExceeded", message="3 llm calls"))))
            seen["out"] = gw.next("output")
            seen["result"] = gw.next("result")

        self.run_session(script)
        self.assertEqual(seen["out"].text, "limit: 3 llm calls\n")
        self.assertEqual(seen["result"].status, pb.CELL_STATUS_OK)

    def test_cancel_and_timeout_end_a_cell_waiting_on_a_callback_and_the_sandbox_goes_on(self):
        seen = {}

        def script(gw):
            gw.next("ready")
            gw.outgoing.put(self.execute("c1", "await list_documents()"))
            gw.next("callback")  # never answered
            gw.outgoing.put(pb.GatewayMessage(cancel=pb.Cancel(cell_id="c1")))
            seen["cancelled"] = gw.next("result")
            gw.outgoing.put(self.execute("c2", "while True:\n    pass", wall_time_ms=200))
            seen["timeout"] = gw.next("result")
            gw.outgoing.put(self.execute("c3", "import os"))
            seen["rejected"] = gw.next("result")
            gw.outgoing.put(self.execute("c4", "print('x' * 100)", max_output_chars=10))
            seen["chunk"] = gw.next("output")
            seen["truncated"] = gw.next("result")

        self.run_session(script)
        self.assertEqual((seen["cancelled"].status, seen["cancelled"].error_type), (pb.CELL_STATUS_CANCELLED, "Cancelled"))
        self.assertEqual((seen["timeout"].status, seen["timeout"].error_type), (pb.CELL_STATUS_TIMEOUT, "Timeout"))
        self.assertEqual((seen["rejected"].status, seen["rejected"].error_type), (pb.CELL_STATUS_ERROR, "ForbiddenConstruct"))
        self.assertIn("line 1: import of 'os'", seen["rejected"].error_message)
        self.assertTrue(seen["truncated"].truncated)
        self.assertTrue(seen["chunk"].text.startswith("x" * 10 + "\n[output truncated"))

    def test_the_runner_exits_when_the_stream_ends_under_a_cell_that_swallows_its_interrupts(self):
        # R5-5: a gateway that dies leaves a cell like this one running for good unless the runner
        # itself ends. Here the exit is recorded instead of made, and then releases the cell (a file
        # it polls) so that the test's own thread comes back.
        exits = []
        stop = self.documents / "stop"

        def exit_process(code):
            exits.append((code, threading.current_thread().name))
            stop.write_text("")

        def script(gw):
            gw.next("ready")
            gw.outgoing.put(self.execute("c1", (
                "from pathlib import Path\n"
                "await list_documents()\n"
                "done = False\n"
                "while not done:\n"
                "    try:\n"
                "        while not Path('/documents/stop').exists():\n"
                "            pass\n"
                "        done = True\n"
                "    except:\n"
                "        pass\n"), wall_time_ms=60_000))
            call = gw.next("callback")
            gw.outgoing.put(pb.GatewayMessage(callback_reply=pb.CallbackReply(call_id=call.call_id, result_json="[]")))
            # then the stream ends (run_session closes it), with the cell spinning

        started = time.monotonic()
        self.run_session(script, exit_process=exit_process)
        self.assertEqual(exits, [(1, "gateway-reader")])
        self.assertLess(time.monotonic() - started, WAIT_SECONDS)

    def test_a_stream_that_ends_between_cells_ends_the_session_without_a_hard_exit(self):
        exits = []

        def script(gw):
            gw.next("ready")
            gw.outgoing.put(self.execute("c1", "1 + 1"))
            gw.next("result")

        self.run_session(script, exit_process=exits.append)
        self.assertEqual(exits, [])


class HardExitBackstop(unittest.TestCase):
    """A cell stuck in C code holds the GIL: neither its timer nor the reader thread can act, so
    faulthandler's watchdog (a C thread) ends the process past the cell's wall time. Here in a child
    process whose 'cell' is one minute of big-integer arithmetic in a single C call."""

    CHILD = """
import sys, time
sys.path[:0] = {paths!r}
from quarry.sandbox.v1 import sandbox_pb2 as pb
from quarry_runner import session
session.HARD_EXIT_PAST_WALL_SECONDS = 0.5
s = session.Session(None, {documents!r}, time.monotonic())
s._executor.run_cell = lambda *a, **k: 7 ** (3 * 10 ** 7)
s._execute(pb.ExecuteRequest(cell_id="c1", code="", limits=pb.CellLimits(wall_time_ms=100)))
sys.exit(0)
"""

    def test_a_cell_stuck_in_c_ends_the_process_past_its_wall_time(self):
        import subprocess
        import sys
        documents = tempfile.mkdtemp(prefix="quarry-docs-")
        try:
            child = self.CHILD.format(paths=list(sys.path), documents=documents)
            started = time.monotonic()
            done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=WAIT_SECONDS)
            elapsed = time.monotonic() - started
        finally:
            shutil.rmtree(documents)
        self.assertEqual(done.returncode, 1, done.stderr)
        self.assertIn("Timeout", done.stderr)  # faulthandler's "Timeout (0:00:00)!" and the stuck thread's stack
        self.assertLess(elapsed, 10)


if __name__ == "__main__":
    unittest.main()
