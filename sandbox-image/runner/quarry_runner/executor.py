"""Runs cells of the restricted language in one persistent namespace.

Each cell is validated, compiled with top-level await allowed, and run as a task on one event loop
that lives as long as the sandbox, so coroutines and variables survive from cell to cell. Output
goes through an OutputCapture; the last expression's value comes back as its repr, REPL-style.

Time limits: a SIGALRM timer raises CellTimeout inside the user's own frames (never inside the
runner's), or cancels the cell's task when it is waiting on a callback. Code stuck inside C (a
catastrophic regular expression) cannot be interrupted from inside; the gateway's hard kill of the
container covers that.
"""
import ast
import asyncio
import builtins
import dataclasses
import inspect
import json
import signal
import sys
import threading
import time
import traceback

from . import standins, validator
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


def _safe_getattr(obj, name, *default):
    if not isinstance(name, str):
        raise TypeError("getattr(): attribute name must be a string")
    reason = validator.forbidden_attribute_reason(name)
    if reason or name in validator.FORMAT_METHODS:
        raise AttributeError(f"attribute '{name}' is not accessible in the sandbox ({reason or 'use an f-string'})")
    return getattr(obj, name, *default)


def _safe_hasattr(obj, name):
    try:
        _safe_getattr(obj, name)
    except AttributeError:
        return False
    return True


class Executor:
    """One sandbox's interpreter. Not thread-safe: cells run on the main thread, one at a time."""

    def __init__(self, call_gateway, documents_root=standins.VIRTUAL_ROOT, on_file_read=None):
        """call_gateway(kind, arguments) is an async function serving search / list_documents / llm."""
        self._call_gateway = call_gateway
        self._on_file_read = on_file_read or (lambda path: None)
        self._fs = standins.DocumentsFs(documents_root, on_read=lambda path: self._on_file_read(path))
        self._modules = standins.make_modules(self._fs)
        self.loop = asyncio.new_event_loop()
        self.namespace = {"__builtins__": self._builtins()}
        self.namespace.update(search=self._search_fn(), list_documents=self._list_documents_fn(),
                              llm=self._llm_fn())
        self._task = None
        self._running = False
        self._interrupt = CellTimeout
        self._lock = threading.Lock()
        signal.signal(signal.SIGALRM, self._on_alarm)

    # --- the names the code sees ---
    def _builtins(self):
        table = {name: getattr(builtins, name) for name in _SAFE_BUILTINS}
        table.update(getattr=_safe_getattr, hasattr=_safe_hasattr, LimitExceeded=LimitExceeded,
                     __import__=self._import)
        return table

    def _import(self, name, globals=None, locals=None, fromlist=(), level=0):
        # The validator already refused other imports; this catches any way around it.
        if level or name not in self._modules:
            raise ImportError(f"import of '{name}' is not allowed in the sandbox")
        return self._modules[name]

    def _search_fn(self):
        async def search(query, limit=10):
            if not isinstance(query, str) or not query.strip():
                raise ValueError("search(query, limit=10): query must be a non-empty string")
            if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100:
                raise ValueError("search(query, limit=10): limit must be an int from 1 to 100")
            return await self._callback("search", {"query": query, "limit": limit})
        search.__qualname__ = "search"  # error messages name it as the code knows it
        return search

    def _list_documents_fn(self):
        async def list_documents():
            return await self._callback("list_documents", {})
        list_documents.__qualname__ = "list_documents"
        return list_documents

    def _llm_fn(self):
        async def llm(prompt):
            if not isinstance(prompt, str) or not prompt.strip():
                raise ValueError("llm(prompt): prompt must be a non-empty string")
            return await self._callback("llm", {"prompt": prompt})
        llm.__qualname__ = "llm"
        return llm

    async def _callback(self, kind, arguments):
        # Measured before encoding: a 240 MB prompt should fail at once, not after json.dumps.
        size = sum(len(v) for v in arguments.values() if isinstance(v, str))
        if size > MAX_CALLBACK_ARGUMENT_CHARS:
            raise ValueError(f"{kind}(): arguments of {size} characters are over the "
                             f"{MAX_CALLBACK_ARGUMENT_CHARS} limit")
        encoded = json.dumps(arguments)
        if len(encoded) > MAX_CALLBACK_ARGUMENT_CHARS:
            raise ValueError(f"{kind}(): arguments of {len(encoded)} characters are over the "
                             f"{MAX_CALLBACK_ARGUMENT_CHARS} limit")
        return await self._call_gateway(kind, arguments)

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
            tree = validator.validate(code)
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

        self._task = self.loop.create_task(self._evaluate(body_code, last_code))
        self._interrupt = CellTimeout
        self._running = True
        signal.setitimer(signal.ITIMER_REAL, wall_time_ms / 1000)
        try:
            value = self.loop.run_until_complete(self._task)
        except (CellInterrupted, asyncio.CancelledError):
            # A cancelled task means the interrupt came while it awaited the gateway.
            return CellOutcome(self._interrupt.status, _INTERRUPT_TYPES[self._interrupt],
                               _interrupt_message(self._interrupt, wall_time_ms))
        except Exception as e:
            return _error_outcome(e, code)
        finally:
            self._running = False
            self._disarm()
        if value is None:
            return CellOutcome("ok")
        try:
            return CellOutcome("ok", value_repr=capture.fit(repr(value)))
        except Exception as e:
            return _error_outcome(e, code)

    async def _evaluate(self, body_code, last_code):
        result = eval(body_code, self.namespace)
        if body_code.co_flags & inspect.CO_COROUTINE:
            await result
        if last_code is None:
            return None
        value = eval(last_code, self.namespace)
        if last_code.co_flags & inspect.CO_COROUTINE:
            value = await value
        return value

    # --- interrupts ---
    def interrupt(self):
        """Cancels the running cell; safe to call from any thread."""
        with self._lock:
            if not self._running:
                return
            self._interrupt = CellCancelled
        signal.pthread_kill(threading.main_thread().ident, signal.SIGALRM)

    def _on_alarm(self, signum, frame):
        if not self._running:
            return
        # Keep interrupting while the code swallows it; the gateway's hard kill is the backstop.
        signal.setitimer(signal.ITIMER_REAL, _REINTERRUPT_SECONDS)
        if frame is not None and frame.f_code.co_filename == CELL_FILENAME:
            raise self._interrupt()
        # In the runner's or asyncio's code (typically waiting for a callback reply): raising here
        # could corrupt the loop, so the task is cancelled at its next await instead.
        task = self._task
        if task is not None and not task.done():
            self.loop.call_soon_threadsafe(task.cancel)

    def _disarm(self):
        signal.setitimer(signal.ITIMER_REAL, 0)

    def close(self):
        self._disarm()
        self.loop.close()


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
