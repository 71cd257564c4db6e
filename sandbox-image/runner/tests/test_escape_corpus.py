"""Every payload of shared/data/escape-corpus.dev.json and of the project's own corpus
(escape-corpus.quarry.json, next to this file) through the validator and the executor.

Each payload runs in its own child process (corpus_worker.py) with an address-space limit in place
of the container's memory limit. These are the in-process fences only: the same corpus runs again
in real containers in the sandbox issue's tests, where the container is the boundary.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import support
from quarry_runner.validator import ForbiddenConstruct, validate

WORKER = pathlib.Path(__file__).with_name("corpus_worker.py")
CORPUS = support.SHARED_DATA / "escape-corpus.dev.json"
# The project's own, grown with each class of escape found: the language boundary's (issue 14).
PROJECT_CORPUS = pathlib.Path(__file__).with_name("escape-corpus.quarry.json")
CANARY = "QUARRY-CANARY-7f3a9c"
# The hard kill the container would get: the worker's wall time (2 s) plus start-up and a generous
# grace, since this machine's two cores are shared.
HARD_KILL_SECONDS = 20

# Payloads the runner cannot stop from inside its own process; the container tests must cover them.
DEFERRED_TO_CONTAINER = {
    "RD-01": "catastrophic backtracking runs inside C's re engine, which never yields to a signal "
             "handler; only the gateway's hard kill of the container ends it",
}

# Paths the payloads try to create; none may exist after a run if it did not exist before.
PROBED_PATHS = ["/tmp/result.json", "/tmp/output.json", "/tmp/stdout", "/tmp/out", "/tmp/o",
                "/tmp/.xt_probe", "/dev/shm/.xt_probe", "/tmp/big0", "/tmp/big1", "/tmp/big2", "/tmp/big3"]
PROBED_PATHS += [os.path.join(d, "zz_persist.pth") for d in sys.path if d]


class EscapeCorpus(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.payloads = json.loads(CORPUS.read_text())
        cls.tmp = tempfile.mkdtemp(prefix="quarry-corpus-")
        cls.documents = support.make_documents(cls.tmp)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def run_payload(self, code):
        """Returns the worker's JSON result, or None when the hard kill had to end it."""
        env = dict(os.environ, QUARRY_SECRET_TOKEN=CANARY)
        try:
            done = subprocess.run([sys.executable, str(WORKER)], input=json.dumps({"code": code, "documents": str(self.documents)}),
                                  capture_output=True, text=True, timeout=HARD_KILL_SECONDS, env=env,
                                  cwd=str(WORKER.parent))
        except subprocess.TimeoutExpired:
            return None
        self.assertEqual(done.returncode, 0, done.stderr[-2000:])
        return json.loads(done.stdout)

    def test_the_validator_refuses_the_introspection_payloads_before_they_run(self):
        refused = []
        for payload in self.payloads:
            try:
                validate(payload["code"])
            except ForbiddenConstruct:
                refused.append(payload["id"])
        # The rest only reach stand-ins (pathlib.os, Path('/etc/...')) and fail when they run.
        self.assertEqual(refused, ["BR-01", "BR-04", "BR-07", "DA-01", "DA-04", "DA-10", "DA-13", "DA-16",
                                   "DA-19", "FT-01", "FT-04", "FT-07", "FT-10", "IB-01", "IB-07", "IB-10",
                                   "IB-13", "PE-04"])

    def test_the_corpus_is_the_expected_one(self):
        self.assertEqual(len(self.payloads), 55)
        self.assertEqual({p["expect"] for p in self.payloads}, {"must_fail", "must_be_contained"})

    def test_every_payload_meets_its_expectation_without_side_effects(self):
        self.meet_expectations(self.payloads)

    def test_every_payload_of_the_project_corpus_meets_its_expectation(self):
        payloads = json.loads(PROJECT_CORPUS.read_text())
        self.assertEqual({p["expect"] for p in payloads}, {"must_fail", "must_be_contained"})
        self.meet_expectations(payloads, contained_must_succeed=True)

    def meet_expectations(self, payloads, contained_must_succeed=False):
        existed = {p for p in PROBED_PATHS if os.path.lexists(p)}
        for payload in payloads:
            with self.subTest(payload["id"]):
                try:
                    validate(payload["code"])
                except ForbiddenConstruct as rejected:
                    # Refused before running: nothing to contain. Only must_fail ones may be here.
                    self.assertEqual(payload["expect"], "must_fail", str(rejected))
                    continue
                started = time.monotonic()
                result = self.run_payload(payload["code"])
                if result is None:
                    self.assertIn(payload["id"], DEFERRED_TO_CONTAINER, "hung until the hard kill")
                    continue
                outcome = result["outcome"]
                everything = json.dumps(result)
                self.assertNotIn(CANARY, everything, "the environment leaked")
                self.assertNotIn("CANARY-OTHER-TENANT", everything, "a file outside /documents leaked")
                self.assertNotIn("root:x:0:0", everything, "/etc/passwd leaked")
                if payload["expect"] == "must_fail":
                    self.assertEqual(outcome["status"], "error", outcome)
                    if "error_type" in payload:  # the project's say how they must fail, not only that they do
                        self.assertEqual(outcome["error_type"], payload["error_type"], outcome)
                elif contained_must_succeed:  # the project's contained payloads are allowed programs
                    self.assertEqual(outcome["status"], "ok", outcome)
                else:
                    self.assertIn(outcome["status"], ("ok", "error", "timeout"), outcome)
                    self.assertLess(time.monotonic() - started, HARD_KILL_SECONDS)
                created = [p for p in PROBED_PATHS if p not in existed and os.path.lexists(p)]
                self.assertEqual(created, [], "the payload left files behind")
                self.assertFalse(os.path.lexists(self.documents / "pwned.txt"))


if __name__ == "__main__":
    unittest.main()
