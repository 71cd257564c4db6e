"""The second wall (wall.py): what a process under the runner's seccomp filter can no longer do, and
that the real runner (python3 -m quarry_runner) puts itself under it and still serves its stream.

The filter cannot be lifted once loaded, so each check runs in a child process. The child is the
attacker who has already left the language: plain Python with os, socket and ctypes.
"""
import concurrent.futures
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

import support

support.generated_stubs()

import grpc  # noqa: E402
from quarry.sandbox.v1 import sandbox_pb2 as pb, sandbox_pb2_grpc  # noqa: E402
from test_protocol import FakeGateway, WAIT_SECONDS  # noqa: E402

ATTACKS = (support.RUNNER_DIR / "tests" / "wall_attacks.py").read_text()
EPERM = 1


def child_env(extra_path=()):
    path = [str(support.RUNNER_DIR), *extra_path, support.DEBIAN_PACKAGES]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(path))


class FilterInAChild(unittest.TestCase):
    def test_an_escaped_program_can_run_nothing_touch_no_process_and_open_no_socket(self):
        tmp = tempfile.mkdtemp(prefix="quarry-wall-")
        probe = os.path.join(tmp, "written")
        try:
            done = subprocess.run([sys.executable, "-c", ATTACKS], capture_output=True, text=True, timeout=60,
                                  env=dict(child_env(), PROBE_FILE=probe))
            self.assertEqual(done.returncode, 0, done.stderr)
            results = json.loads(done.stdout)
            self.assertFalse(os.path.exists(probe))
        finally:
            shutil.rmtree(tmp)
        self.assertTrue(results.pop("in_force"))
        allowed = {name: results.pop(name) for name in
                   ("read a file", "thread", "signal to itself", "kill itself with 0")}
        self.assertEqual(allowed, {"read a file": True, "thread": True, "signal to itself": True,
                                   "kill itself with 0": "done"})
        self.assertEqual(results, {name: EPERM for name in results}, results)
        self.assertGreaterEqual(len(results), 20)


    def test_a_system_call_of_another_table_kills_the_process(self):
        x32_execve = "import ctypes\nfrom quarry_runner import wall\nwall.install()\n" \
                     "ctypes.CDLL(None).syscall(0x40000000 + 520, b'/bin/true', 0, 0)\nprint('survived')"
        done = subprocess.run([sys.executable, "-c", x32_execve], capture_output=True, text=True, timeout=60,
                              env=child_env())
        self.assertEqual(done.returncode, -signal.SIGSYS, done.stderr)
        self.assertEqual(done.stdout, "")


class RunnerUnderTheFilter(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="quarry-wall-sock-")
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

    def test_the_runner_serves_cells_and_callbacks_under_its_filter(self):
        env = dict(child_env([support.generated_stubs()]), QUARRY_SOCKET=self.socket,
                   QUARRY_DOCUMENTS=str(self.documents))
        runner = subprocess.Popen([sys.executable, "-s", "-m", "quarry_runner"], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            gw = self.gateway
            gw.next("ready")
            with open(f"/proc/{runner.pid}/status") as status:
                self.assertIn("Seccomp:\t2", status.read(), "the runner serves before its filter is in place")
            gw.outgoing.put(pb.GatewayMessage(execute=pb.ExecuteRequest(
                cell_id="c1", code="hits = await search('q')\nprint(hits[0]['id'])\nlen(hits)")))
            call = gw.next("callback")
            gw.outgoing.put(pb.GatewayMessage(callback_reply=pb.CallbackReply(
                call_id=call.call_id, result_json=json.dumps([{"id": "h1"}]))))
            self.assertEqual(gw.next("output").text, "h1\n")
            result = gw.next("result")
            self.assertEqual((result.status, result.value_repr), (pb.CELL_STATUS_OK, "1"))
            # A cell that runs past its time is still interrupted: the timer signal is allowed.
            gw.outgoing.put(pb.GatewayMessage(execute=pb.ExecuteRequest(
                cell_id="c2", code="while True:\n    pass", limits=pb.CellLimits(wall_time_ms=200))))
            self.assertEqual(gw.next("result").status, pb.CELL_STATUS_TIMEOUT)
            gw.outgoing.put(None)  # the gateway ends the stream: the runner exits
            self.assertEqual(runner.wait(timeout=WAIT_SECONDS), 0, runner.stderr.read())
        finally:
            if runner.poll() is None:
                runner.kill()
                runner.wait()
            runner.stdout.close()
            runner.stderr.close()


if __name__ == "__main__":
    unittest.main()
