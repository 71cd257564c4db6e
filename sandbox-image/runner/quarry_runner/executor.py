"""Runs cells of the restricted language in one persistent namespace.

Each cell is validated, instrumented (every attribute read goes through guard.py), compiled with
top-level await allowed, and run on the main thread. There is no event loop: a cell that awaits is
a coroutine this module drives itself, and what search/list_documents/llm return is a Pending, an
object of Quarry's own that is opaque to the code; awaiting one sends the callback and blocks until
its reply. So nothing the code can hold leads to asyncio, a loop, a task or a future, and the only
values the driver accepts from the code's coroutines are Pendings.

Time limits: a SIGALRM timer raises CellTimeout inside the cell's own frames (never inside the
runner's), or ends the wait for a callback reply. Code stuck inside C (a catastrophic regular
expression) cannot be interrupted from inside; the gateway's hard kill of the container covers that.
"""
import ast
import builtins
import dataclasses
import inspect
import itertools
import json
import queue
import signal
import sys
import threading
import time
import traceback

from . import guard, standins, validator
from .output import OutputCapture

CELL_FILENAME = "<cell>"
DEFAULT_WALL_TIME_MS = 30_000
DEFAULT_MAX_OUTPUT_CHARS = 50_000
# Beyond this a callback's arguments are refused in the sandbox, before anything is sent.
MAX_CALLBACK_ARGUMENT_CHARS = 1_000_000
# Error messages and tracebacks are clipped to this; traceback keeps this many frames at each end.
MAX_ERROR_CHARS = 8_000
TRACEBACK_FRAMES_KEPT = 10
# After the first interrupt, how often to try again while the code swallows it (bare except).
_REINTERRUPT_SECONDS = 0.05

# Exception types a callback failure may be raised as; anything else becomes a RuntimeError.
class LimitExceeded(RuntimeError):
    """A per-analysis limit (search or llm calls) was reached."""


CALLBACK_ERROR_TYPES = {cls.__name__: cls for cls in (
    ValueError, TypeError, RuntimeError, PermissionError, TimeoutError, LookupError, LimitExceeded)}


class CellInterrupted(BaseException):
    """Raised into user code to stop it; a BaseException so `except Exception` does not swallow it."""
    status = None


class CellTimeout(CellInterrupted):
    status = "timeout"


class CellCancelled(CellInterrupted):
    status = "cancelled"


@dataclasses.dataclass
class CellOutcome:
    status: str  # ok | error | timeout | cancelled
    error_type: str = ""
    error_message: str = ""
    traceback: str = ""
    truncated: bool = False
    duration_ms: int = 0
    value_repr: str = ""


_SAFE_BUILTINS = (
    "abs", "all", "any", "ascii", "bin", "bool", "bytes", "callable", "chr", "dict", "divmod",
    "enumerate", "filter", "float", "format", "frozenset", "hash", "hex", "id", "int", "isinstance",
    "issubclass", "iter", "len", "list", "map", "max", "min", "next", "oct", "ord", "pow", "print",
    "range", "repr", "reversed", "round", "set", "slice", "sorted", "str", "sum", "tuple", "zip",
    "Exception", "ArithmeticError", "AssertionError", "AttributeError", "FileNotFoundError",
    "IndexError", "IsADirectoryError", "KeyError", "LookupError", "MemoryError", "NameError",
    "NotImplementedError", "OSError", "OverflowError", "PermissionError", "RecursionError",
    "RuntimeError", "StopIteration", "TimeoutError", "TypeError", "UnicodeDecodeError",
    "UnicodeError", "ValueError", "ZeroDivisionError",
)


def _print(*values, sep=" ", end="\n", file=None, flush=False):
    # print(file=x) would call x.write from C, past the attribute gate; output has one place to go.
    if file is not None:
        raise TypeError("print(): file= is not available in the sandbox; output goes to stdout")
    builtins.print(*values, sep=sep, end=end)


class Pending:
    """What search(), list_documents() and llm() return: a call not sent yet, sent when awaited.

    Opaque to the code: it has no attribute the gate allows, and awaiting it is the only thing to do
    with it. Awaiting yields the Pending itself to the executor's driver, which alone acts on it.
    """
    __slots__ = ("_kind", "_arguments", "_awaited")

    def __init__(self, kind, arguments):
        self._kind = kind
        self._arguments = arguments
        self._awaited = False

    def __await__(self):
        if self._awaited:
            raise RuntimeError(f"this {self._kind}() call was already awaited; call {self._kind}() again")
        self._awaited = True
        return (yield self)

    def __repr__(self):
        return f"<pending {self._kind}() call: await it>"


_END_OF_WAIT = object()


class Executor:
    """One sandbox's interpreter. Not thread-safe: cells run on the main thread, one at a time.

    call_gateway(kind, arguments, reply) sends one callback (search / list_documents / llm) and
    returns; reply(result=...) or reply(error=exception) is called once with its outcome, from any
    thread, at once or later.
    """

    def __init__(self, call_gateway, documents_root=standins.VIRTUAL_ROOT, on_file_read=None):
        self._call_gateway = call_gateway
        self._on_file_read = on_file_read or (lambda path: None)
        self._fs = standins.DocumentsFs(documents_root, on_read=lambda path: self._on_file_read(path))
        self._modules = standins.make_modules(self._fs)
        self.namespace = {"__builtins__": self._builtins()}
        self.namespace.update(search=_search, list_documents=_list_documents, llm=_llm)
        # Replies and wake-ups for the cell waiting on a callback. SimpleQueue, because the SIGALRM
        # handler puts into it on the thread that may be inside get().
        self._inbox = queue.SimpleQueue()
        self._call_ids = itertools.count(1)
        self._deadline = 0.0
        self._running = False
        self._interrupt = None  # CellTimeout or CellCancelled once the running cell is interrupted
        self._lock = threading.Lock()
        self.current_output = None
        signal.signal(signal.SIGALRM, self._on_alarm)

    # --- the names the code sees ---
    def _builtins(self):
        table = {name: getattr(builtins, name) for name in _SAFE_BUILTINS}
        table.update(getattr=guard.getattr_, hasattr=guard.hasattr_, print=_print, LimitExceeded=LimitExceeded,
                     __import__=self._import)
        table[validator.ATTRIBUTE_GATE] = guard.attribute
        return table

    def _import(self, name, globals=None, locals=None, fromlist=(), level=0):
        # The validator already refused other imports; this catches any way around it.
        if level or name not in self._modules:
            raise ImportError(f"import of '{name}' is not allowed in the sandbox")
        return self._modules[name]

    def preload_documents(self, document_ids):
        """Defines `documents` from /documents/{id}/ (metadata.json and content.txt)."""
        Path = self._fs.path_class
        documents = []
        for document_id in document_ids:
            folder = Path(document_id)
            if folder.parent != Path():
                raise ValueError(f"not a document id: {document_id!r}")
            meta = json.loads((folder / "metadata.json").read_text())
            documents.append({"id": meta["id"], "title": meta.get("title"), "uri": meta.get("uri"),
                              "content": (folder / "content.txt").read_text()})
        self.namespace["documents"] = documents

    # --- running a cell ---
    def run_cell(self, code, emit, wall_time_ms=0, max_output_chars=0, preload_document_ids=()):
        """Runs one cell; emit(channel, text) receives output chunks in order. Returns a CellOutcome."""
        wall_time_ms = wall_time_ms or DEFAULT_WALL_TIME_MS
        capture = OutputCapture(emit, max_output_chars or DEFAULT_MAX_OUTPUT_CHARS)
        self.current_output = capture
        started = time.monotonic()
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = capture.stdout, capture.stderr
        try:
            if preload_document_ids:
                self.preload_documents(preload_document_ids)
            outcome = self._run(code, capture, wall_time_ms)
        except Exception as e:  # preloading failed: the cell did not start
            outcome = CellOutcome("error", type(e).__name__, _clip(f"preloading documents: {_describe(e)}"))
        finally:
            self._disarm()
            sys.stdout, sys.stderr = saved
        outcome.truncated = capture.truncated
        outcome.duration_ms = int((time.monotonic() - started) * 1000)
        capture.flush()
        return outcome

    def _run(self, code, capture, wall_time_ms):
        try:
            tree = validator.instrument(validator.validate(code))
            body, last = _split_last_expression(tree)
            flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
            body_code = compile(body, CELL_FILENAME, "exec", flags=flags, dont_inherit=True)
            last_code = compile(last, CELL_FILENAME, "eval", flags=flags, dont_inherit=True) if last else None
        except validator.ForbiddenConstruct as e:
            return CellOutcome("error", "ForbiddenConstruct", str(e))
        except SyntaxError as e:
            return CellOutcome("error", type(e).__name__, _clip(f"line {e.lineno}: {e.msg}"))
        except (RecursionError, MemoryError):
            return CellOutcome("error", "ForbiddenConstruct", "line 1: code too complex to compile is not allowed")

        with self._lock:
            self._interrupt = None
            self._running = True
        self._deadline = time.monotonic() + wall_time_ms / 1000
        while True:  # replies and wake-ups left over from an earlier cell
            try:
                self._inbox.get_nowait()
            except queue.Empty:
                break
        signal.setitimer(signal.ITIMER_REAL, wall_time_ms / 1000)
        try:
            value = self._evaluate(body_code, last_code)
            if self._interrupt is not None:  # the code swallowed the interrupt and went on
                raise self._interrupt()
        except CellInterrupted:
            kind = self._interrupt or CellTimeout
            return CellOutcome(kind.status, _INTERRUPT_TYPES[kind], _interrupt_message(kind, wall_time_ms))
        except Exception as e:
            return _error_outcome(e, code)
        finally:
            with self._lock:
                self._running = False
            self._disarm()
        if value is None:
            return CellOutcome("ok")
        try:
            return CellOutcome("ok", value_repr=capture.fit(repr(value)))
        except Exception as e:
            return _error_outcome(e, code)

    def _evaluate(self, body_code, last_code):
        result = eval(body_code, self.namespace)
        if body_code.co_flags & inspect.CO_COROUTINE:
            self._drive(result)
        if last_code is None:
            return None
        value = eval(last_code, self.namespace)
        if last_code.co_flags & inspect.CO_COROUTINE:
            value = self._drive(value)
        return value

    def _drive(self, coroutine):
        """Runs a cell's coroutine to its end, serving each Pending it awaits; returns its value."""
        value, error = None, None
        try:
            while True:
                try:
                    awaited = coroutine.send(value) if error is None else coroutine.throw(error)
                except StopIteration as done:
                    return done.value
                value, error = None, None
                if type(awaited) is not Pending:
                    # Only a Pending yields to this driver; anything else is refused, not acted on.
                    error = TypeError("only search(), list_documents() and llm() can be awaited in the sandbox")
                    continue
                try:
                    value = self._serve(awaited)
                except BaseException as e:  # the callback's error, or the interrupt, goes into the code
                    error = e
        finally:
            coroutine.close()

    def _serve(self, pending):
        """Sends one callback and waits for its reply, the deadline or an interrupt."""
        if self._interrupt is not None:
            raise self._interrupt()
        kind, arguments = pending._kind, pending._arguments
        _check_callback_size(kind, arguments)
        call_id = next(self._call_ids)
        put = self._inbox.put

        def reply(result=None, error=None):
            put((call_id, result, error))
        self._call_gateway(kind, arguments, reply)
        while True:
            try:
                item = self._inbox.get(timeout=max(0.0, self._deadline - time.monotonic()))
            except queue.Empty:
                self._interrupted(CellTimeout)
                item = _END_OF_WAIT
            if self._interrupt is not None:
                raise self._interrupt()
            if item is _END_OF_WAIT or item[0] != call_id:
                continue  # a wake-up that was not an interrupt, or a late reply to an abandoned call
            _, result, error = item
            if error is not None:
                raise error
            return result

    # --- interrupts ---
    def interrupt(self):
        """Cancels the running cell; safe to call from any thread."""
        with self._lock:
            if not self._running:
                return
            self._interrupted(CellCancelled)
        self._inbox.put(_END_OF_WAIT)
        signal.pthread_kill(threading.main_thread().ident, signal.SIGALRM)

    def _interrupted(self, kind):
        if self._interrupt is None:
            self._interrupt = kind

    def _on_alarm(self, signum, frame):
        if not self._running:
            return
        self._interrupted(CellTimeout)
        # Keep interrupting while the code swallows it; the gateway's hard kill is the backstop.
        signal.setitimer(signal.ITIMER_REAL, _REINTERRUPT_SECONDS)
        if frame is not None and frame.f_code.co_filename in _INTERRUPTIBLE_FILES:
            raise self._interrupt()
        # In the runner's own code (typically waiting for a callback reply): raising here could leave
        # it half done, so the wait is woken instead and raises the interrupt itself.
        self._inbox.put(_END_OF_WAIT)
        # In any other code the cell called (the runner's stand-ins, json, re, its output): the
        # nearest cell frame raises at its next line. Without this a cell that spends most of its
        # time in such calls outruns its wall time many times over, since the timer rarely lands in
        # the cell's own frame (a loop of Path.read_text() ran 5.5 s of a 2 s budget, json.dumps 4.6 s).
        cell = frame
        while cell is not None and cell.f_code.co_filename != CELL_FILENAME:
            cell = cell.f_back
        if cell is not None and cell.f_trace is None:
            cell.f_trace = self._trace_interrupt
            cell.f_trace_lines = True
            sys.settrace(_no_new_tracing)  # line events reach f_trace only while tracing is on

    def _trace_interrupt(self, frame, event, arg):
        if self._interrupt is not None and event == "line":
            raise self._interrupt()
        return self._trace_interrupt

    def _disarm(self):
        signal.setitimer(signal.ITIMER_REAL, 0)
        sys.settrace(None)

    def close(self):
        self._disarm()


def _no_new_tracing(frame, event, arg):
    """The global trace function while an interrupt waits for a cell's next line: traces no new frame."""
    return None


# The cell's frames, and the gate's (which keeps no state), may be interrupted where they stand.
_INTERRUPTIBLE_FILES = frozenset({CELL_FILENAME, guard.__file__})


def _search(query, limit=10):
    if not isinstance(query, str) or not query.strip():
        raise ValueError("search(query, limit=10): query must be a non-empty string")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100:
        raise ValueError("search(query, limit=10): limit must be an int from 1 to 100")
    return Pending("search", {"query": query, "limit": limit})


def _list_documents():
    return Pending("list_documents", {})


def _llm(prompt):
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError("llm(prompt): prompt must be a non-empty string")
    return Pending("llm", {"prompt": prompt})


# Error messages and signatures name them as the code knows them.
_search.__name__ = _search.__qualname__ = "search"
_list_documents.__name__ = _list_documents.__qualname__ = "list_documents"
_llm.__name__ = _llm.__qualname__ = "llm"


def _check_callback_size(kind, arguments):
    # Measured before encoding: a 240 MB prompt should fail at once, not after json.dumps.
    size = sum(len(v) for v in arguments.values() if isinstance(v, str))
    if size > MAX_CALLBACK_ARGUMENT_CHARS:
        raise ValueError(f"{kind}(): arguments of {size} characters are over the "
                         f"{MAX_CALLBACK_ARGUMENT_CHARS} limit")
    encoded = json.dumps(arguments)
    if len(encoded) > MAX_CALLBACK_ARGUMENT_CHARS:
        raise ValueError(f"{kind}(): arguments of {len(encoded)} characters are over the "
                         f"{MAX_CALLBACK_ARGUMENT_CHARS} limit")


_INTERRUPT_TYPES = {CellTimeout: "Timeout", CellCancelled: "Cancelled"}


def _interrupt_message(kind, wall_time_ms):
    if kind is CellTimeout:
        return f"the cell ran longer than its {wall_time_ms} ms wall-time limit"
    return "the cell was cancelled"


def _split_last_expression(tree):
    """The module without its last statement when that is an expression, and that expression."""
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(body=tree.body[-1].value)
        return ast.Module(body=tree.body[:-1], type_ignores=[]), last
    return tree, None


def _error_outcome(error, code):
    return CellOutcome("error", type(error).__name__, _clip(_describe(error)), _clip(user_traceback(error, code)))


def _describe(error):
    try:
        return str(error)
    except Exception:  # a message that cannot even be rendered still leaves a typed error
        return "<unprintable message>"


def _clip(text):
    # Whatever the code raises, the result must stay far below a gRPC message's size limit.
    if len(text) <= MAX_ERROR_CHARS:
        return text
    return text[:MAX_ERROR_CHARS] + f"... [{len(text) - MAX_ERROR_CHARS} more characters]"


def user_traceback(error, code):
    """The traceback with only the cell's own frames: the runner's are noise and reveal internals."""
    lines = code.splitlines()
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == CELL_FILENAME]
    if len(frames) > 2 * TRACEBACK_FRAMES_KEPT:  # deep recursion: the ends tell the story
        omitted = len(frames) - 2 * TRACEBACK_FRAMES_KEPT
        frames = frames[:TRACEBACK_FRAMES_KEPT] + [omitted] + frames[-TRACEBACK_FRAMES_KEPT:]
    out = ["Traceback (most recent call last):"]
    for frame in frames:
        if isinstance(frame, int):
            out.append(f"  ... {frame} more frames ...")
            continue
        where = "<cell>" if frame.name == "<module>" else frame.name
        out.append(f"  line {frame.lineno}, in {where}")
        if frame.lineno and 0 < frame.lineno <= len(lines):
            out.append("    " + lines[frame.lineno - 1].strip())
    out.append(f"{type(error).__name__}: {error}")
    return "\n".join(out)
