"""The runner's side of quarry.sandbox.v1: one stream to the gateway, cells run on the main thread.

Threads: grpc drains the outbox on its own thread; a reader thread receives the gateway's messages,
queues cells, hands callback replies to the waiting cell and forwards cancels; the main thread
runs the cells (signals, and so time limits, only work there).

The runner never outlives its stream: once it ends (the gateway closed it, or died), the process
exits, whatever a cell is doing (R5-5: a cell that swallowed its interrupts in a loop kept a dead
gateway's container at full CPU for good).
"""
import faulthandler
import itertools
import json
import os
import queue
import sys
import threading
import time

from quarry.sandbox.v1 import sandbox_pb2 as pb

from .executor import CALLBACK_ERROR_TYPES, DEFAULT_WALL_TIME_MS, Executor

RUNNER_VERSION = "1"
# Generous, but bounded: the runner itself refuses callback arguments over 1 MB.
MAX_MESSAGE_BYTES = 16 * 1024 * 1024

_CALLBACK_KINDS = {
    "search": pb.CALLBACK_KIND_SEARCH,
    "list_documents": pb.CALLBACK_KIND_LIST_DOCUMENTS,
    "llm": pb.CALLBACK_KIND_LLM,
}
_CHANNELS = {"stdout": pb.OUTPUT_CHANNEL_STDOUT, "stderr": pb.OUTPUT_CHANNEL_STDERR}
_STATUSES = {
    "ok": pb.CELL_STATUS_OK,
    "error": pb.CELL_STATUS_ERROR,
    "timeout": pb.CELL_STATUS_TIMEOUT,
    "cancelled": pb.CELL_STATUS_CANCELLED,
}
_END = object()
# Once the stream has ended, how long the main loop gets to end by itself (it does at once between
# cells) before the reader thread ends the process.
STREAM_END_GRACE_SECONDS = 1.0
# A cell stuck in C code (a regular expression) holds the GIL, so no Python thread could end the
# process for it: faulthandler's watchdog, a C thread, does, this long past the cell's wall time.
# Later than the gateway's own kill (wall time + 3 s), so it only ever acts when the gateway is gone.
HARD_EXIT_PAST_WALL_SECONDS = 10


def _exit_now(code):
    """Ends the process at once, whatever its threads are doing (no clean-up: nothing is left to say)."""
    try:
        sys.__stderr__.flush()
    finally:
        os._exit(code)


class ProtocolError(Exception):
    """The gateway sent something this runner does not understand."""


class Session:
    """Serves one stream: Ready first, then one CellResult per ExecuteRequest, until the stream ends."""

    def __init__(self, stub, documents_root, started_at, exit_process=_exit_now):
        self._stub = stub
        self._exit_process = exit_process
        self._finished = threading.Event()
        self._outbox = queue.Queue()
        self._cells = queue.Queue()
        self._pending = {}  # call_id -> the executor's reply function for that callback
        self._call_ids = itertools.count(1)
        self._cell_id = None
        self._started_at = started_at
        self._executor = Executor(self._call_gateway, documents_root, on_file_read=self._file_read)

    def run(self):
        """Blocks until the gateway closes the stream; returns normally then."""
        responses = self._stub.Connect(iter(self._outbox.get, _END))
        startup_ms = int((time.monotonic() - self._started_at) * 1000)
        self._send(ready=pb.Ready(runner_version=RUNNER_VERSION, startup_ms=startup_ms))
        reader = threading.Thread(target=self._read, args=(responses,), name="gateway-reader", daemon=True)
        reader.start()
        try:
            while (request := self._cells.get()) is not _END:
                self._execute(request)
        finally:
            self._outbox.put(_END)
            self._executor.close()
            self._finished.set()

    # --- gateway -> runner ---
    def _read(self, responses):
        try:
            for message in responses:
                kind = message.WhichOneof("kind")
                if kind == "execute":
                    self._cells.put(message.execute)
                elif kind == "callback_reply":
                    self._resolve(message.callback_reply)
                elif kind == "cancel":
                    if message.cancel.cell_id == self._cell_id:
                        self._executor.interrupt()
                else:
                    raise ProtocolError(f"unknown gateway message: {kind}")
        except Exception as e:
            # The stream broke or the gateway spoke a newer protocol: either way this sandbox is
            # over. sys.__stderr__, because sys.stderr may be a running cell's capture.
            print(f"quarry-runner: stream ended: {e!r}", file=sys.__stderr__)
        finally:
            self._cells.put(_END)
            # Nobody can hear this sandbox any more: a cell still running (one that swallows its
            # interrupts never ends) must not keep the container, and its CPU, for good.
            if not self._finished.wait(STREAM_END_GRACE_SECONDS):
                print("quarry-runner: the gateway's stream ended while a cell ran; exiting",
                      file=sys.__stderr__)
                self._exit_process(1)

    def _resolve(self, reply):
        deliver = self._pending.pop(reply.call_id, None)
        if deliver is None:
            return  # not asked, or asked twice
        if reply.WhichOneof("outcome") == "result_json":
            try:
                deliver(result=json.loads(reply.result_json))
            except ValueError:
                deliver(error=RuntimeError("the gateway's reply was not valid JSON"))
        else:
            error_type = CALLBACK_ERROR_TYPES.get(reply.error.type, RuntimeError)
            deliver(error=error_type(reply.error.message))

    # --- runner -> gateway ---
    def _execute(self, request):
        self._cell_id = request.cell_id
        wall_seconds = (request.limits.wall_time_ms or DEFAULT_WALL_TIME_MS) / 1000
        faulthandler.dump_traceback_later(wall_seconds + HARD_EXIT_PAST_WALL_SECONDS, exit=True,
                                          file=sys.__stderr__)
        try:
            outcome = self._executor.run_cell(
                request.code, self._output,
                wall_time_ms=request.limits.wall_time_ms,
                max_output_chars=request.limits.max_output_chars,
                preload_document_ids=list(request.preload_document_ids))
        finally:
            faulthandler.cancel_dump_traceback_later()
            self._cell_id = None
        self._send(result=pb.CellResult(
            cell_id=request.cell_id, status=_STATUSES[outcome.status], error_type=outcome.error_type,
            error_message=outcome.error_message, traceback=outcome.traceback,
            truncated=outcome.truncated, duration_ms=outcome.duration_ms, value_repr=outcome.value_repr))

    def _output(self, channel, text):
        self._send(output=pb.OutputChunk(cell_id=self._cell_id, channel=_CHANNELS[channel], text=text))

    def _file_read(self, path):
        self._send(file_read=pb.FileRead(cell_id=self._cell_id or "", path=path))

    def _call_gateway(self, kind, arguments, reply):
        call_id = str(next(self._call_ids))
        # A reply to a call its cell stopped waiting for is dropped by the executor, so entries of
        # abandoned calls are only dropped here when their reply comes.
        self._pending[call_id] = reply
        # What was printed before the call belongs before it in the stream.
        self._executor.current_output.flush()
        self._send(callback=pb.CallbackRequest(cell_id=self._cell_id, call_id=call_id,
                                               kind=_CALLBACK_KINDS[kind],
                                               arguments_json=json.dumps(arguments)))

    def _send(self, **kind):
        self._outbox.put(pb.SandboxMessage(**kind))
