"""The restricted language of docs/CONTRACT.md ("The interpreter"), checked on the AST before anything runs.

It is an allow-list: a node type not named here is refused, so syntax added by a later Python is
refused until someone decides otherwise. Every refusal names the construct and its line.

After the check, instrument() routes every attribute read through guard.attribute, the run-time
allow-list that is the language's boundary; this module's checks are the early, friendlier refusals.
"""
import ast

from .guard import unsafe_format_field

# Larger programs than this are not "a cell"; refusing them early keeps parse time and memory small.
MAX_SOURCE_CHARS = 200_000
# CPython's compiler recurses over the AST; a bound well under its C-stack limit keeps it from crashing.
MAX_AST_DEPTH = 200

# The stand-ins an `import` may bind, and the names `from M import name` may take from each.
IMPORTABLE = {
    "json": {"loads", "dumps", "JSONDecodeError"},
    "re": {"compile", "search", "match", "fullmatch", "findall", "finditer", "split", "sub", "subn",
           "escape", "error", "IGNORECASE", "I", "MULTILINE", "M", "DOTALL", "S", "VERBOSE", "X",
           "ASCII", "A"},
    "math": None,  # every public name of math
    "pathlib": {"Path"},
}

# Attribute-name prefixes of frames, code objects, tracebacks, generators and coroutines, plus the
# Python 2 spellings of function internals: each one leads to globals or builtins.
INTERNAL_PREFIXES = ("f_", "co_", "tb_", "gi_", "cr_", "ag_", "func_", "im_")
# Driving a coroutine by hand would hand out what it awaits (once, the event loop's futures): refused
# early here by name, and by guard.py's allow-list whatever the spelling.
INTERNAL_NAMES = frozenset({"send", "throw", "mro"})
# str.format reads attributes named inside the format string: templates are checked here when literal,
# and by guard.py at run time.
FORMAT_METHODS = frozenset({"format", "format_map"})


class ForbiddenConstruct(Exception):
    """The code uses something outside the restricted language; nothing of it has run."""

    def __init__(self, construct, line, why=None):
        self.construct = construct
        self.line = line
        detail = f" ({why})" if why else ""
        super().__init__(f"line {line}: {construct} is not allowed{detail}")


def forbidden_attribute_reason(name):
    """Why an attribute name may not be reached, or None when it may. Shared with getattr()."""
    if name.startswith("_"):
        return "names starting with '_' reach interpreter internals"
    if name.startswith(INTERNAL_PREFIXES) or name in INTERNAL_NAMES:
        return "it reaches frames, code objects, coroutines or globals"
    return None


_ALLOWED = (
    # statements
    ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.Return, ast.Delete, ast.Assign,
    ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.While, ast.If, ast.Raise, ast.Try,
    ast.Assert, ast.Import, ast.ImportFrom, ast.Expr, ast.Pass, ast.Break, ast.Continue,
    # expressions
    ast.BoolOp, ast.NamedExpr, ast.BinOp, ast.UnaryOp, ast.Lambda, ast.IfExp, ast.Dict, ast.Set,
    ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Await, ast.Compare, ast.Call,
    ast.FormattedValue, ast.JoinedStr, ast.Constant, ast.Attribute, ast.Subscript, ast.Starred,
    ast.Name, ast.List, ast.Tuple, ast.Slice,
    # parts
    ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop, ast.comprehension,
    ast.ExceptHandler, ast.arguments, ast.arg, ast.keyword, ast.alias,
)

# Friendly names for what the contract rejects by name; anything else unknown is "<Type> syntax".
_REJECTED = {
    ast.ClassDef: ("'class'", "define functions instead"),
    ast.Yield: ("'yield' (generator)", "build a list instead"),
    ast.YieldFrom: ("'yield from' (generator)", "build a list instead"),
    ast.Match: ("'match'", "use if/elif"),
    ast.With: ("'with'", "Path has read_text() and read_bytes()"),
    ast.AsyncWith: ("'async with'", None),
    ast.Global: ("'global'", "variables of a cell are already shared with later cells"),
    ast.Nonlocal: ("'nonlocal'", None),
    ast.TryStar: ("'except*'", "use a plain except"),
}


def validate(source):
    """Parse and check one cell; returns its AST or raises ForbiddenConstruct / SyntaxError."""
    if not isinstance(source, str):
        raise TypeError("code must be a string")
    if len(source) > MAX_SOURCE_CHARS:
        raise ForbiddenConstruct(f"code of {len(source)} characters", 1,
                                 f"at most {MAX_SOURCE_CHARS} per cell")
    try:
        tree = ast.parse(source, filename="<cell>", mode="exec")
    except (RecursionError, MemoryError):
        # The parser itself gave up: the nesting is far beyond anything we would compile.
        raise ForbiddenConstruct("deeply nested code", 1, f"at most {MAX_AST_DEPTH} levels") from None
    _check(tree)
    return tree


def _check(tree):
    # Iterative on purpose: recursion here would fail on exactly the inputs being refused.
    stack = [(tree, 0, 1)]
    while stack:
        node, depth, line = stack.pop()
        line = getattr(node, "lineno", line)
        if depth > MAX_AST_DEPTH:
            raise ForbiddenConstruct("deeply nested code", line, f"at most {MAX_AST_DEPTH} levels")
        _check_node(node, line)
        for child in ast.iter_child_nodes(node):
            stack.append((child, depth + 1, line))


def _check_node(node, line):
    kind = type(node)
    if kind in _REJECTED:
        construct, why = _REJECTED[kind]
        raise ForbiddenConstruct(construct, line, why)
    if not isinstance(node, _ALLOWED):
        raise ForbiddenConstruct(f"{kind.__name__} syntax", line, "not part of the sandbox language")
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        if node.decorator_list:
            raise ForbiddenConstruct("decorator", node.decorator_list[0].lineno)
        _check_name(node.name, line)
    elif isinstance(node, ast.Attribute):
        _check_attribute(node, line)
    elif isinstance(node, ast.Name):
        _check_name(node.id, line)
    elif isinstance(node, ast.arg):
        _check_name(node.arg, line)
    elif isinstance(node, ast.ExceptHandler) and node.name:
        _check_name(node.name, line)
    elif isinstance(node, ast.Import):
        for alias in node.names:
            _check_import(alias.name, line)
            if alias.asname:
                _check_name(alias.asname, line)
    elif isinstance(node, ast.ImportFrom):
        _check_import_from(node, line)


def _check_name(name, line):
    # Dunder names (__builtins__, __import__, __loader__...) are the interpreter's, not the code's.
    if name.startswith("__"):
        raise ForbiddenConstruct(f"name '{name}'", line, "names starting with '__' reach interpreter internals")


def _check_attribute(node, line):
    reason = forbidden_attribute_reason(node.attr)
    if reason:
        raise ForbiddenConstruct(f"attribute '{node.attr}'", line, reason)
    if not isinstance(node.ctx, ast.Load):
        raise ForbiddenConstruct(f"assigning or deleting attribute '{node.attr}'", line,
                                 "only variables, list items and dict keys can be assigned")
    if node.attr in FORMAT_METHODS:
        template = node.value
        if not (isinstance(template, ast.Constant) and isinstance(template.value, str)):
            raise ForbiddenConstruct(f"'.{node.attr}' on a non-literal string", line, "use an f-string")
        bad = unsafe_format_field(template.value)
        if bad is not None:
            raise ForbiddenConstruct(f"format field '{{{bad}}}'", line,
                                     "format fields may index but not reach attributes; use an f-string")


def _check_import(module, line):
    if module not in IMPORTABLE:
        raise ForbiddenConstruct(f"import of '{module}'", line,
                                 "only json, re, math and pathlib can be imported")


def _check_import_from(node, line):
    module = node.module or ""
    if node.level:
        raise ForbiddenConstruct("relative import", line)
    _check_import(module, line)
    names = IMPORTABLE[module]
    for alias in node.names:
        if alias.name == "*":
            raise ForbiddenConstruct(f"'from {module} import *'", line, "import the names you use")
        _check_name(alias.name, line)
        if forbidden_attribute_reason(alias.name):
            raise ForbiddenConstruct(f"import of '{module}.{alias.name}'", line,
                                     forbidden_attribute_reason(alias.name))
        if names is not None and alias.name not in names:
            raise ForbiddenConstruct(f"import of '{module}.{alias.name}'", line,
                                     f"{module} offers {', '.join(sorted(names))}")
        if alias.asname:
            _check_name(alias.asname, line)


# The name instrumented code calls for every attribute read; a cell cannot spell it ('__' names are
# refused above), so it can neither call nor rebind it.
ATTRIBUTE_GATE = "__quarry_attr__"


class _RouteAttributes(ast.NodeTransformer):
    def visit_Attribute(self, node):
        self.generic_visit(node)
        call = ast.Call(func=ast.Name(id=ATTRIBUTE_GATE, ctx=ast.Load()),
                        args=[node.value, ast.Constant(value=node.attr)], keywords=[])
        return ast.copy_location(call, node)


def instrument(tree):
    """Rewrites every `x.name` read of a validated tree as __quarry_attr__(x, 'name'), in place."""
    _RouteAttributes().visit(tree)
    return ast.fix_missing_locations(tree)
