"""Safe stand-ins for json, re, math and pathlib.Path.

The real modules are one attribute away from sys and os (pathlib.os, re.functools, json.decoder...),
so the code gets small objects that expose only what the contract names. Path is read-only and
confined to the documents root, resolving symlinks before every access.
"""
import json as _json
import math as _math
import os
import pathlib as _pathlib
import posixpath
import re as _re

# The root as the code sees it; the runner maps it onto the real documents directory.
VIRTUAL_ROOT = "/documents"
JSONDecodeError = _json.JSONDecodeError

WRITE_METHODS = ("write_text", "write_bytes", "mkdir", "rmdir", "unlink", "touch", "rename",
                  "replace", "symlink_to", "hardlink_to", "chmod", "open")


class StandInModule:
    """Looks like a module to the code; lists what it has when asked for what it has not."""

    def __init__(self, name, members):
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_members", dict(members))

    @staticmethod
    def members(module):
        """The names the module offers (read by guard.py, which never calls the module's own lookup)."""
        return object.__getattribute__(module, "_members")

    def __getattr__(self, attr):
        members = object.__getattribute__(self, "_members")
        if attr in members:
            return members[attr]
        name = object.__getattribute__(self, "_name")
        offered = ", ".join(sorted(members)) if len(members) < 30 else "the public math functions"
        raise AttributeError(f"module '{name}' has no attribute '{attr}' in the sandbox (it offers {offered})")

    def __setattr__(self, attr, value):
        raise AttributeError(f"module '{object.__getattribute__(self, '_name')}' is read-only")

    def __repr__(self):
        return f"<module '{object.__getattribute__(self, '_name')}' (sandbox stand-in)>"


def _dumps(obj, *, indent=None, sort_keys=False, ensure_ascii=True, separators=None, default=None):
    return _json.dumps(obj, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii,
                       separators=separators, default=default)


def _loads(text):
    return _json.loads(text)


def make_modules(documents):
    """The importable stand-ins, keyed by module name; `documents` is a DocumentsFs."""
    re_names = ("compile", "search", "match", "fullmatch", "findall", "finditer", "split", "sub",
                "subn", "escape", "error", "IGNORECASE", "I", "MULTILINE", "M", "DOTALL", "S",
                "VERBOSE", "X", "ASCII", "A")
    math_names = [n for n in dir(_math) if not n.startswith("_")]
    return {
        "json": StandInModule("json", {"loads": _loads, "dumps": _dumps,
                                       "JSONDecodeError": _json.JSONDecodeError}),
        # The flags as plain ints: re.RegexFlag is an enum whose iterator is a generator of enum.py's.
        "re": StandInModule("re", {n: int(v) if isinstance(v, _re.RegexFlag) else v
                                   for n in re_names for v in (getattr(_re, n),)}),
        "math": StandInModule("math", {n: getattr(_math, n) for n in math_names}),
        "pathlib": StandInModule("pathlib", {"Path": documents.path_class}),
    }


class DocumentsFs:
    """Maps virtual /documents paths onto a real directory and refuses anything outside it."""

    def __init__(self, real_root, on_read=None):
        self.real_root = os.path.realpath(real_root)
        self.on_read = on_read or (lambda virtual: None)
        self.path_class = type("Path", (Path,), {"_fs": self})

    def real(self, virtual):
        """The real path of a virtual one, symlinks resolved, refused when it leaves the root."""
        if virtual != VIRTUAL_ROOT and not virtual.startswith(VIRTUAL_ROOT + "/"):
            raise PermissionError(f"{virtual}: outside {VIRTUAL_ROOT}")
        real = os.path.realpath(self.real_root + virtual[len(VIRTUAL_ROOT):])
        if real != self.real_root and not real.startswith(self.real_root + os.sep):
            raise PermissionError(f"{virtual}: resolves outside {VIRTUAL_ROOT}")
        return real

    def virtual(self, real):
        """The virtual path of a real path under the root (not resolved)."""
        return VIRTUAL_ROOT + real[len(self.real_root):]


class Path:
    """A read-only pathlib.Path over /documents. Paths outside it can be built but not touched."""

    _fs = None  # set on the per-sandbox subclass made by DocumentsFs

    def __init__(self, *parts):
        texts = []
        for part in parts:
            if isinstance(part, Path):
                texts.append(part._virtual)
            elif isinstance(part, str):
                texts.append(part)
            else:
                raise TypeError(f"Path() takes strings or Paths, not {type(part).__name__}")
        # Relative paths are relative to /documents, the only place there is anything to read.
        joined = posixpath.join(VIRTUAL_ROOT, *texts) if texts else VIRTUAL_ROOT
        normal = posixpath.normpath(joined)
        self._virtual = "/" + normal.lstrip("/")

    def _new(self, virtual):
        return type(self)(virtual)

    # --- pure path operations: no file system access ---
    def __str__(self):
        return self._virtual

    def __repr__(self):
        return f"Path('{self._virtual}')"

    def __eq__(self, other):
        return isinstance(other, Path) and other._virtual == self._virtual

    def __hash__(self):
        return hash(self._virtual)

    def __lt__(self, other):
        if not isinstance(other, Path):
            return NotImplemented
        return self._virtual < other._virtual

    def __truediv__(self, other):
        return self._new(posixpath.join(self._virtual, str(other) if isinstance(other, Path) else other))

    def __rtruediv__(self, other):
        # A Path is always absolute here, and an absolute right-hand side wins, as in pathlib.
        return self._new(self._virtual)

    def joinpath(self, *others):
        return type(self)(self, *others)

    @property
    def name(self):
        return posixpath.basename(self._virtual)

    @property
    def suffix(self):
        return _pathlib.PurePosixPath(self._virtual).suffix

    @property
    def suffixes(self):
        return _pathlib.PurePosixPath(self._virtual).suffixes

    @property
    def stem(self):
        return _pathlib.PurePosixPath(self._virtual).stem

    @property
    def parent(self):
        return self._new(posixpath.dirname(self._virtual))

    @property
    def parts(self):
        return _pathlib.PurePosixPath(self._virtual).parts

    def with_name(self, name):
        return self._new(str(_pathlib.PurePosixPath(self._virtual).with_name(name)))

    def with_suffix(self, suffix):
        return self._new(str(_pathlib.PurePosixPath(self._virtual).with_suffix(suffix)))

    def relative_to(self, other):
        return str(_pathlib.PurePosixPath(self._virtual).relative_to(str(other)))

    def match(self, pattern):
        return _pathlib.PurePosixPath(self._virtual).match(pattern)

    def as_posix(self):
        return self._virtual

    # --- reads, each confined to the root ---
    def resolve(self):
        return self._new(self._fs.virtual(self._fs.real(self._virtual)))

    def exists(self):
        return os.path.exists(self._fs.real(self._virtual))

    def is_file(self):
        return os.path.isfile(self._fs.real(self._virtual))

    def is_dir(self):
        return os.path.isdir(self._fs.real(self._virtual))

    def iterdir(self):
        real = self._fs.real(self._virtual)
        try:
            names = sorted(os.listdir(real))
        except OSError as e:
            raise _virtual_error(e, self._virtual) from None
        return [self / name for name in names]

    def glob(self, pattern):
        return self._glob(pattern, recursive=False)

    def rglob(self, pattern):
        return self._glob(pattern, recursive=True)

    def _glob(self, pattern, recursive):
        if not isinstance(pattern, str) or pattern.startswith("/"):
            raise ValueError("glob patterns are relative strings, e.g. '*/metadata.json'")
        real = self._fs.real(self._virtual)
        base = _pathlib.Path(real)
        found = base.rglob(pattern) if recursive else base.glob(pattern)
        results = []
        for hit in found:
            candidate = self._new(self._virtual + "/" + os.path.relpath(str(hit), real))
            try:
                self._fs.real(candidate._virtual)
            except PermissionError:
                continue  # a symlink or '..' that leads out of the root is not listed
            results.append(candidate)
        return sorted(results)

    def read_bytes(self):
        real = self._readable_file()
        try:
            with open(real, "rb") as f:
                data = f.read()
        except OSError as e:
            raise _virtual_error(e, self._virtual) from None
        self._fs.on_read(self._virtual)
        return data

    def read_text(self, encoding="utf-8", errors="strict"):
        return self.read_bytes().decode(encoding, errors)

    def _readable_file(self):
        real = self._fs.real(self._virtual)
        if not os.path.exists(real):
            raise FileNotFoundError(f"{self._virtual}: no such file")
        if not os.path.isfile(real):
            # Devices, FIFOs and directories: reading them could block or never end.
            raise IsADirectoryError(f"{self._virtual}: not a regular file")
        return real


def _read_only(method):
    def refuse(self, *args, **kwargs):
        raise PermissionError(f"{self._virtual}: {method}() refused, /documents is read-only")
    refuse.__name__ = method
    return refuse


for _method in WRITE_METHODS:
    setattr(Path, _method, _read_only(_method))


def _virtual_error(error, virtual):
    """The same kind of error, naming the virtual path instead of the real one."""
    return type(error)(f"{virtual}: {error.strerror or error}")
