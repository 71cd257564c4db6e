"""What a cell may reach at run time: attributes by allow-list, per type of object.

Every `obj.name` a cell reads is compiled as `__quarry_attr__(obj, 'name')` (validator.instrument),
and getattr/hasattr are the same function, so there is one gate for every way of naming an
attribute. The gate allows only the names listed here for the exact type of the object: the
methods of the built-in data types, the stand-in modules' members, Path's, regular-expression
patterns' and matches', and a few fields of exceptions. Everything else is refused by name:
functions, coroutines, generators, iterators, types other than the data types, and any object of
the runner's own. A name Python adds in a later version is refused until someone lists it.

Code cannot define classes, so every object it holds is of a type named here or is opaque to it.
"""
import re
import string

from . import standins

_STR = frozenset("""capitalize casefold center count encode endswith expandtabs find format format_map
    index isalnum isalpha isascii isdecimal isdigit isidentifier islower isnumeric isprintable isspace
    istitle isupper join ljust lower lstrip maketrans partition removeprefix removesuffix replace rfind
    rindex rjust rpartition rsplit rstrip split splitlines startswith strip swapcase title translate
    upper zfill""".split())
_BYTES = frozenset("""capitalize center count decode endswith expandtabs find fromhex hex index isalnum
    isalpha isascii isdigit islower isspace istitle isupper join ljust lower lstrip maketrans partition
    removeprefix removesuffix replace rfind rindex rjust rpartition rsplit rstrip split splitlines
    startswith strip swapcase title translate upper zfill""".split())
_LIST = frozenset("append clear copy count extend index insert pop remove reverse sort".split())
_TUPLE = frozenset("count index".split())
_DICT = frozenset("clear copy fromkeys get items keys pop popitem setdefault update values".split())
_FROZENSET = frozenset("""copy difference intersection isdisjoint issubset issuperset
    symmetric_difference union""".split())
_SET = _FROZENSET | frozenset("""add clear difference_update discard intersection_update pop remove
    symmetric_difference_update update""".split())
_INT = frozenset("""as_integer_ratio bit_count bit_length conjugate denominator from_bytes imag
    numerator real to_bytes""".split())
_FLOAT = frozenset("as_integer_ratio conjugate fromhex hex imag is_integer real".split())
_COMPLEX = frozenset("conjugate imag real".split())
_PATTERN = frozenset("findall finditer flags fullmatch groupindex groups match pattern search split sub subn".split())
_MATCH = frozenset("end endpos expand group groupdict groups lastgroup lastindex pos re regs span start string".split())
PATH = frozenset("""as_posix exists glob is_dir is_file iterdir joinpath match name parent parts
    read_bytes read_text relative_to resolve rglob stem suffix suffixes with_name with_suffix""".split()
                 ) | frozenset(standins.WRITE_METHODS)  # these refuse with a clear message

# Exact type of an instance -> the attributes a cell may read on it.
_ON_INSTANCES = {
    str: _STR, bytes: _BYTES, list: _LIST, tuple: _TUPLE, dict: _DICT, set: _SET,
    frozenset: _FROZENSET, int: _INT, bool: _INT, float: _FLOAT, complex: _COMPLEX,
    range: frozenset("count index start step stop".split()),
    slice: frozenset("indices start step stop".split()),
    type({}.keys()): frozenset({"isdisjoint"}), type({}.items()): frozenset({"isdisjoint"}),
    re.Pattern: _PATTERN, re.Match: _MATCH,
}
# The data types themselves (str.strip, dict.fromkeys, int.from_bytes): their instances' names.
_ON_TYPES = {t: names for t, names in _ON_INSTANCES.items() if t in (
    str, bytes, list, tuple, dict, set, frozenset, int, bool, float, complex)}
# Exception class -> its fields a cell may read (beyond `args`, which every exception has).
_EXCEPTION_FIELDS = {
    BaseException: frozenset({"args"}),
    OSError: frozenset({"errno", "strerror", "filename", "filename2"}),
    UnicodeDecodeError: frozenset({"encoding", "object", "start", "end", "reason"}),
    StopIteration: frozenset({"value"}),
    standins.JSONDecodeError: frozenset({"msg", "doc", "pos", "lineno", "colno"}),
    re.error: frozenset({"msg", "pattern", "pos", "lineno", "colno"}),
}
_NOTHING = frozenset()
_MISSING = object()


def allowed_names(obj):
    """The attribute names a cell may read on `obj` (empty for anything opaque to it)."""
    kind = type(obj)
    names = _ON_INSTANCES.get(kind)
    if names is not None:
        return names
    if kind is type:
        return _ON_TYPES.get(obj, _NOTHING)
    if kind is standins.StandInModule:
        return standins.StandInModule.members(obj).keys()
    if isinstance(obj, standins.Path):
        return PATH
    if isinstance(obj, BaseException):
        names = set()
        for cls in kind.__mro__:
            names |= _EXCEPTION_FIELDS.get(cls, _NOTHING)
        return names
    return _NOTHING


def attribute(obj, name, default=_MISSING):
    """`obj.name` as a cell may see it: allowed by the table above, else AttributeError naming it."""
    if type(name) is not str:
        raise TypeError("attribute name must be a string")
    if name not in allowed_names(obj):
        if default is not _MISSING:
            return default
        raise AttributeError(f"attribute '{name}' of {_describe(obj)} is not available in the sandbox")
    if name in ("format", "format_map"):
        if type(obj) is str:
            return _checked_format(obj, name)
        return _checked_unbound_format(name)  # str.format(template, ...)
    return getattr(obj, name)


def getattr_(obj, name, *default):
    """The getattr a cell calls: the same gate as the `.` syntax."""
    if len(default) > 1:
        raise TypeError(f"getattr expected at most 3 arguments, got {2 + len(default)}")
    return attribute(obj, name, *default)


def hasattr_(obj, name):
    try:
        attribute(obj, name)
    except AttributeError:
        return False
    return True


def _describe(obj):
    if type(obj) is type:
        return f"type '{obj.__name__}'"
    if type(obj) is standins.StandInModule:
        return repr(obj)
    name = type(obj).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name} object"


# --- str.format reads attributes named in its template ("{0.__globals__}"): templates are checked ---
def unsafe_format_field(template):
    """The first replacement field that reads an attribute ("{0.x}"), or None when there is none."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError:
        return None  # str.format raises the same ValueError itself
    for _, field, spec, _ in parsed:
        if field and "." in field:
            return field
        if spec:
            bad = unsafe_format_field(spec)
            if bad is not None:
                return bad
    return None


def _check_template(template):
    bad = unsafe_format_field(template) if type(template) is str else None
    if bad is not None:
        raise ValueError(f"format field '{{{bad}}}' reads an attribute, which the sandbox does not allow; "
                         "use an f-string")


def _checked_format(template, method):
    real = getattr(template, method)

    def format(*args, **kwargs):
        _check_template(template)
        return real(*args, **kwargs)
    return format


def _checked_unbound_format(method):
    real = getattr(str, method)

    def format(template, *args, **kwargs):
        _check_template(template)
        return real(template, *args, **kwargs)
    return format
