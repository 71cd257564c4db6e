"""Round 5 harness: the real runner, with its first wall (the restricted language) removed for cells
that start with '#RAW'. Such a cell runs as plain Python in the runner's process, after the seccomp
filter is in force, with `session` (the runner's Session: its stream to the gateway), `pb` (the
protocol's messages) and `cell_id` in its globals. It stands for code that has escaped the language,
so that the second wall and the gateway's handling of an untrusted stream can be tested.
Every other cell runs exactly as in the real runner."""
import sys
from quarry_runner import executor as _ex
from quarry_runner import __main__ as _main
from quarry.sandbox.v1 import sandbox_pb2 as pb

_real_run = _ex.Executor._run


def _run(self, code, capture, wall_time_ms):
    if not code.startswith("#RAW"):
        return _real_run(self, code, capture, wall_time_ms)
    session = self._call_gateway.__self__
    g = {"session": session, "pb": pb, "cell_id": session._cell_id, "executor": self, "__name__": "raw"}
    try:
        exec(compile(code, "<raw>", "exec"), g)
        return _ex.CellOutcome("ok")
    except BaseException as e:  # noqa
        import traceback
        return _ex.CellOutcome("error", type(e).__name__, str(e)[:2000], traceback.format_exc()[-4000:])


_ex.Executor._run = _run

if __name__ == "__main__":
    sys.exit(_main.main())
