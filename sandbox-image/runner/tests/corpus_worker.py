"""Runs one escape-corpus payload in this (child) process and prints the outcome as JSON.

A separate process per payload, with an address-space limit standing in for the container's
memory limit, so that a payload the in-process fences do not stop cannot hurt the test run.
Reads {"code", "documents"} on stdin.
"""
import dataclasses
import json
import resource
import sys

import support
from quarry_runner.executor import Executor

ADDRESS_SPACE_BYTES = 1 << 30
WALL_TIME_MS = 2000


def main():
    request = json.load(sys.stdin)
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_BYTES, ADDRESS_SPACE_BYTES))
    executor = Executor(support.FakeGateway(), request["documents"])
    outcome, stdout, stderr = support.run(executor, request["code"], wall_time_ms=WALL_TIME_MS)
    real_stdout = sys.__stdout__
    real_stdout.write(json.dumps({"outcome": dataclasses.asdict(outcome), "stdout": stdout, "stderr": stderr}))
    real_stdout.flush()


if __name__ == "__main__":
    main()
