"""The language boundary: nothing of the runner's machinery is reachable from any value a cell holds.

Hand-written cases for each way of reaching an attribute or an object, then property-based ones
(Hypothesis): generated chains of attribute reads, getattr spellings, calls, iteration and awaits
from every kind of object a cell can get, each result checked by an oracle that knows what a cell
may hold. The oracle runs in the test, outside the sandbox, so it can look at everything.
"""
import asyncio
import re
import shutil
import tempfile
import types
import unittest

from hypothesis import HealthCheck, given, settings, strategies as st

import support
from support import FakeGateway, run
from quarry_runner import executor as executor_module, guard, standins, validator
from quarry_runner.executor import Executor, Pending

# Expressions for every kind of object a cell can get hold of.
ROOTS = [
    "search", "list_documents", "llm", "search('q')", "llm('p')", "print", "getattr", "len", "map", "str",
    "dict", "LimitExceeded", "ValueError('x')", "json", "re", "math", "Path", "Path('doc-1')",
    "Path('doc-1/content.txt')", "re.compile('a(b)')", "re.search('a(b)', 'ab')", "re.I", "json.JSONDecodeError",
    "(x for x in [1, 2])", "(await list_documents() for _ in range(1))", "agen_of_search", "coro_of_user",
    "user_fn", "lambda: 0", "map(str, [1])", "filter(None, [1])", "zip([1], [2])", "enumerate([1])",
    "reversed([1])", "iter([1])", "iter({1: 2})", "{'a': 1}.keys()", "{'a': 1}.items()", "{'a': 1}.values()",
    "range(3)", "slice(1, 2)", "b'ab'", "1j", "list[int]", "'s'.upper", "caught", "await search('q')",
    "await list_documents()", "await llm('p')", "None", "...", "True", "1.5", "[1]", "(1,)", "{1}",
    "frozenset([1])", "{'k': 'v'}", "json.loads('{\"a\": [1]}')", "Path('doc-1').iterdir()",
]
SETUP = (
    "import json, re, math\nfrom pathlib import Path\n"
    "async def user_coro():\n    return await search('q')\n"
    "def user_fn(a=1):\n    return a\n"
    "agen_of_search = (await search(q) for q in ['a'])\n"
    "coro_of_user = user_coro()\n"
    "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    caught = e\n"
)
# Names of the machinery an attacker would try, plus every public name of the types involved.
MACHINERY_NAMES = sorted({
    "send", "throw", "close", "asend", "athrow", "aclose", "gi_frame", "gi_code", "gi_yieldfrom",
    "cr_frame", "cr_await", "cr_code", "cr_origin", "ag_frame", "ag_await", "ag_code", "f_back", "f_globals",
    "f_locals", "f_builtins", "tb_frame", "tb_next", "co_code", "get_loop", "_loop", "_fs", "_members",
    "_kind", "_arguments", "real_root", "path_class", "on_read", "members", "mro", "with_traceback",
    "add_note", "mapping", "scanner", "obj", "name", "value", "__class__", "__globals__", "__self__",
    "__closure__", "__defaults__", "__code__", "__dict__", "__reduce__", "__reduce_ex__", "__await__",
    "__subclasses__", "__origin__", "__builtins__", "__traceback__", "__context__", "__cause__",
    "__func__", "__wrapped__", "__getattribute__", "__init__", "format", "format_map", "args", "keys",
    "upper", "read_text", "parent", "group", "re", "loads", "sqrt", "Path", "compile", "fromkeys",
} | {n for t in (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType, types.FunctionType,
                 types.FrameType, types.TracebackType, asyncio.Future, asyncio.AbstractEventLoop, Pending,
                 standins.Path, standins.StandInModule, type, BaseException)
     for n in dir(t)})

DATA = (str, bytes, int, float, bool, complex, type(None), type(...), range, slice)
CONTAINERS = (list, tuple, dict, set, frozenset)
ITERATOR_TYPES = {type(iter(x)) for x in ([], (), {}, set(), "", b"", range(1), range(1 << 70), {}.keys(),
                                         {}.values(), {}.items(), frozenset())} | {
    type(reversed(x)) for x in ([], range(1), range(1 << 70), {}, {}.keys(), {}.values(), {}.items())} | {
    type(re.finditer("a", "a")), type(iter(int, 1)), type(iter(bytearray())), type(iter(list[int])), 
    map, filter, zip, enumerate, reversed, types.GenericAlias, type({}.keys()), type({}.values()), type({}.items())}


class Boundary(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="quarry-boundary-")
        cls.documents = support.make_documents(cls.tmp)
        cls.executor = Executor(FakeGateway(), str(cls.documents))
        outcome, _, _ = run(cls.executor, SETUP)
        assert outcome.status == "ok", outcome
        cls.builtins = cls.executor.namespace["__builtins__"]
        cls.offered = {id(v) for v in cls.builtins.values()}
        for name in ("search", "list_documents", "llm"):
            cls.offered.add(id(cls.executor.namespace[name]))
        for module in cls.executor._modules.values():
            cls.offered.add(id(module))
            cls.offered |= {id(v) for v in standins.StandInModule.members(module).values()}

    @classmethod
    def tearDownClass(cls):
        cls.executor.close()
        shutil.rmtree(cls.tmp)

    # --- the oracle ---
    def assert_harmless(self, value, path="value", depth=0):
        """Fails when `value` is, or leads through what the cell may read to, the runner's machinery."""
        if depth > 6:
            return
        kind = type(value)
        if isinstance(value, DATA):
            return
        if kind in CONTAINERS:
            self.assertIsNot(value, self.executor.namespace, f"{path}: the cell's globals")
            self.assertIsNot(value, self.builtins, f"{path}: the builtins table")
            items = value.items() if kind is dict else enumerate(value)
            for key, item in list(items)[:20]:
                self.assert_harmless(item, f"{path}[{key!r}]", depth + 1)
            return
        if id(value) in self.offered or kind in (Pending, standins.StandInModule, re.Pattern, re.Match):
            return
        if isinstance(value, standins.Path) or value is self.executor._fs.path_class:
            return
        if kind in ITERATOR_TYPES or kind.__module__ == "builtins" and kind.__name__.endswith("iterator"):
            # C iterators: the gate allows no attribute on them, and what they yield is checked
            # when a chain calls next() or list() on them.
            self.assertLessEqual(set(guard.allowed_names(value)), {"isdisjoint"}, path)  # the dict views'
            return
        if kind is types.MethodType:  # Path's methods, bound: no attribute of theirs is allowed
            self.assertEqual(guard.allowed_names(value), frozenset(), path)
            self.assertIn(value.__func__, [f for f in vars(standins.Path).values() if callable(f)], path)
            self.assert_harmless(value.__self__, f"{path}.__self__", depth + 1)
            return
        if kind is types.FunctionType and value.__code__.co_filename == guard.__file__:
            self.assertEqual(value.__name__, "format", path)  # the checked str.format of guard.py
            return
        if kind in (types.FunctionType, types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType):
            code = value.__code__ if kind is types.FunctionType else getattr(
                value, {types.GeneratorType: "gi_code", types.CoroutineType: "cr_code"}.get(kind, "ag_code"))
            self.assertEqual(code.co_filename, "<cell>", f"{path}: a {kind.__name__} of the runner: {value!r}")
            return
        if kind is types.BuiltinFunctionType or kind is types.BuiltinMethodType:
            owner = value.__self__
            if owner is None or isinstance(owner, types.ModuleType) and owner.__name__ in ("builtins", "math"):
                return
            self.assert_harmless(owner, f"{path}.__self__", depth + 1)
            return
        if kind is types.MethodWrapperType or kind.__name__ in ("method_descriptor", "classmethod_descriptor",
                                                                  "getset_descriptor", "member_descriptor"):
            return  # of a data type: calling it needs an instance of that type
        if isinstance(value, type):
            self.assertTrue(value in guard._ON_TYPES or issubclass(value, BaseException) and id(value) in self.offered
                            or value in (re.error, standins.JSONDecodeError),
                            f"{path}: a type the cell was never given: {value!r}")
            return
        if isinstance(value, BaseException):
            self.assertIsInstance(value, Exception, f"{path}: an interrupt the cell should not hold")
            for field in guard.allowed_names(value):
                self.assert_harmless(getattr(value, field, None), f"{path}.{field}", depth + 1)
            return
        self.fail(f"{path}: the cell holds {kind.__module__}.{kind.__qualname__}: {value!r}")

    def probe(self, code):
        """Runs a cell; returns its outcome and the values it left in `found`."""
        self.executor.namespace.pop("found", None)
        outcome, stdout, stderr = run(self.executor, code, wall_time_ms=5000)
        self.assertIn(outcome.status, ("ok", "error"), outcome)
        self.assertNotIn(outcome.error_type, ("Timeout", "Cancelled"), outcome)
        return outcome, self.executor.namespace.get("found", [])

    # --- hand-written: the finding and each way around the '.' syntax ---
    def test_the_reported_async_generator_escape_is_refused_by_name(self):
        for code, name in (("agen = (await list_documents() for _ in range(1))\nnext(agen.asend(None))", "asend"),
                           ("agen = (await list_documents() for _ in range(1))\nnext(getattr(agen, 'as' + 'end')(None))", "asend"),
                           ("search('q').send(None)", "send"), ("getattr(search('q'), 'cr_await')", "cr_await")):
            with self.subTest(code):
                outcome, _, _ = run(self.executor, code)
                # `.send` the validator already refuses; the rest reach the run-time gate.
                expected = "ForbiddenConstruct" if code.endswith(".send(None)") else "AttributeError"
                self.assertEqual(outcome.error_type, expected, outcome)
                self.assertIn(f"'{name}'", outcome.error_message)

    def test_what_a_callback_returns_is_quarrys_own_opaque_object(self):
        outcome, found = self.probe("found = [search('q'), list_documents(), llm('p')]")
        self.assertEqual([type(v) for v in found], [Pending] * 3)
        self.assertEqual(guard.allowed_names(found[0]), frozenset())
        self.assertEqual(self.probe("p = search('q')\nfound = [await p]")[1][0][0]["content"], "hit for q")

    def test_there_is_no_event_loop_to_reach(self):
        self.assertFalse(any(isinstance(v, asyncio.AbstractEventLoop) for v in vars(self.executor).values()))
        self.assertNotIn("asyncio", vars(executor_module))

    def test_the_driver_refuses_anything_but_a_pending(self):
        # An awaitable that yields something else would need a class or a generator with `yield`.
        outcome, _, _ = run(self.executor, "await (x for x in [1])")
        self.assertEqual(outcome.error_type, "TypeError")

    def test_format_templates_cannot_read_attributes_however_the_method_is_reached(self):
        for code in ("getattr('{0.real}', 'format')(1)", "t = '{0.' + 'real}'\nt.format(1)",
                     "str.format('{0.real}', 1)", "getattr(str, 'format_map')('{x.real}', {'x': 1})",
                     "'{0:{1.real}}'.format(1, 2)"):
            with self.subTest(code):
                outcome, _, _ = run(self.executor, code)
                self.assertEqual(outcome.status, "error", outcome)
                # Refused by the validator when it can see the call, else by the gate when it runs.
                self.assertRegex(outcome.error_message, r"'\{[^']*real\}'|'.format' on a non-literal string")
        self.assertEqual(run(self.executor, "t = '{0}-{k}'\nt.format(1, k=2)")[0].error_type, "ForbiddenConstruct")
        self.assertEqual(run(self.executor, "getattr('{0}-{k}', 'format')(1, k=2)")[0].value_repr, "'1-2'")

    def test_print_cannot_be_pointed_at_another_object(self):
        outcome, _, _ = run(self.executor, "print('x', file=json)")
        self.assertEqual(outcome.error_type, "TypeError")

    def test_attributes_cannot_be_assigned_or_deleted(self):
        for code in ("user_fn.write = print", "del user_fn.x", "user_fn.x += 1"):
            with self.subTest(code):
                self.assertEqual(run(self.executor, code)[0].error_type, "ForbiddenConstruct")

    def test_the_data_types_keep_their_methods(self):
        outcome, _, _ = run(self.executor, "(' a '.strip(), [3, 1].index(1), {'a': 1}.get('a'), (1).bit_length(), "
                                           "str.upper('x'), dict.fromkeys('ab', 0), re.compile('(a)').search('a').group(1), "
                                           "Path('doc-1').name, json.loads('[1]'), math.floor(1.5), range(5).stop)")
        self.assertEqual(outcome.value_repr, "('a', 1, 1, 1, 'X', {'a': 0, 'b': 0}, 'a', 'doc-1', [1], 1, 5)")

    def test_every_refusal_names_the_attribute_and_the_object(self):
        outcome, _, _ = run(self.executor, "getattr(search, 'anything')")
        self.assertEqual(outcome.error_message, "attribute 'anything' of a function object is not available in the sandbox")

    # --- generated ---
    @settings(max_examples=300, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(root=st.sampled_from(ROOTS),
           steps=st.lists(st.tuples(st.sampled_from(["dot", "getattr", "getattr_default", "hasattr", "call",
                                                     "next", "iter", "item", "await", "list", "args"]),
                                    st.sampled_from(MACHINERY_NAMES)), min_size=1, max_size=4))
    def test_generated_chains_from_every_reachable_object_reach_nothing_of_the_runner(self, root, steps):
        lines = ["found = []", "async def probe():", f"    x = {root}", "    found.append(x)"]
        for how, name in steps:
            spell = {
                # The validator refuses some names outright; those go through getattr instead.
                "dot": f"getattr(x, {name!r})" if validator.forbidden_attribute_reason(name)
                       or name in validator.FORMAT_METHODS else f"x.{name}",
                "getattr": f"getattr(x, {name!r})",
                "getattr_default": f"getattr(x, {name!r}, None)",
                "hasattr": f"hasattr(x, {name!r})",
                "call": "x()", "next": "next(x)", "iter": "iter(x)", "item": "x[0]", "await": "await x",
                "list": "list(x)", "args": "x.args",
            }[how]
            lines += ["    try:", f"        x = {spell}", "    except Exception as e:", "        x = e",
                      "    found.append(x)"]
        lines.append("await probe()")
        outcome, found = self.probe("\n".join(lines))
        self.assertEqual(outcome.status, "ok", (outcome, lines))
        for i, value in enumerate(found):
            self.assert_harmless(value, f"step {i} of {root} {steps}")


class ProjectCorpusMeta(unittest.TestCase):
    def test_the_project_corpus_has_each_class_of_this_boundary(self):
        import json
        payloads = json.loads((support.RUNNER_DIR / "tests" / "escape-corpus.quarry.json").read_text())
        self.assertGreaterEqual(len(payloads), 40)
        self.assertEqual(len({p["id"] for p in payloads}), len(payloads))
        self.assertTrue({"async_machinery", "format_strings", "exception_internals", "function_internals",
                         "iterator_internals", "type_internals", "getattr_spellings"} <= {p["category"] for p in payloads})


if __name__ == "__main__":
    unittest.main()
