"""Generated programs against the language boundary: whole cells, not single chains.

test_boundary.py generates chains of attribute reads from one value. Here Hypothesis builds cells
out of the constructs that carry values between scopes: async functions and lambdas that return
callbacks' Pendings, async comprehensions of every kind, Pendings stored in containers, passed
through user functions and awaited twice, exceptions raised from inside them and caught outside
(with their args and tracebacks), f-strings and format specs over all of it. Whatever a cell does:
- it ends ok or with a typed error, never a runner failure, a timeout or a hang;
- every value it kept passes test_boundary's oracle (nothing of the runner's machinery);
- an error's traceback and message name only the cell (`<cell>`, `line N`), never a runner file;
- the executor serves the next cell as before.
"""
import re
import unittest

from hypothesis import HealthCheck, given, settings, strategies as st

from support import run
import test_boundary

# Expressions that produce a value, each in terms of `v` (the value so far).
SOURCES = ["search('q')", "list_documents()", "llm('p')", "v", "[v]", "(v,)", "{'k': v}", "user_fn(v)",
           "(lambda: v)()", "(lambda a=v: a)()", "[v][0]", "{'k': v}['k']", "(v if True else 0)",
           "next(iter([v]))", "list(map(user_fn, [v]))[0]", "dict(k=v)['k']", "[x for x in [v]][0]"]
# Ways to turn a value into another, possibly awaiting it.
STEPS = [
    "v = await v", "v = await user_coro(v)", "v = [await x for x in [v]]", "v = {await x for x in [v]}",
    "v = {0: await x for x in [v]}", "v = [x async for x in agen(v)]", "v = [y async for y in (await z for z in [v])]",
    "v = await (lambda: v)()", "v = (await v, await v)", "v = f'{v}'", "v = f'{v!r:>10}'", "v = str(v)",
    "v = repr(v)", "v = type_name(v)", "v = [v, v]", "v = v[0]", "v = len(v)", "v = list(v)", "v = iter(v)",
    "v = next(v)", "v = v.args", "v = getattr(v, 'args', v)", "v = hasattr(v, 'args')", "v = sorted([v])",
    "v = raiser(v)", "v = await araiser(v)", "v = ValueError(v)", "v = {'a': v}.get('a')", "v = min([v])",
    "v = '{0}'.format(v)", "v = '{0!r}'.format(v)", "v = '{0[0]}'.format(v)", "v = json.dumps(v)",
    "v = json.loads(v)", "v = v()", "v = user_fn(v, v)", "v = [v for _ in range(2)][1]",
]
SETUP = (
    "import json\n"
    "def user_fn(a=1, b=None):\n    return a\n"
    "async def user_coro(x):\n    return await x\n"
    "async def agen_helper(x):\n    return [x]\n"
    "def agen(x):\n    return (await y for y in [x])\n"
    "def raiser(x):\n    raise ValueError(x)\n"
    "async def araiser(x):\n    raise KeyError(await x)\n"
    "def type_name(x):\n    return str(x)\n"
)
RUNNER_FILE = re.compile(r"quarry_runner|executor\.py|guard\.py|standins\.py|\.py\"|site-packages|/usr/lib")


class GeneratedPrograms(test_boundary.Boundary):
    """Shares test_boundary's executor set-up and its oracle."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        outcome, _, _ = run(cls.executor, SETUP)
        assert outcome.status == "ok", outcome

    @settings(max_examples=400, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(source=st.sampled_from(SOURCES),
           steps=st.lists(st.sampled_from(STEPS), min_size=1, max_size=6),
           wrap=st.sampled_from(["plain", "nested_async", "lambda_await", "finally"]))
    def test_generated_programs_keep_nothing_of_the_runner(self, source, steps, wrap):
        body = ["found = []", "async def probe(v):", f"    v = {source}", "    found.append(v)"]
        for step in steps:
            body += ["    try:", f"        {step}", "    except Exception as e:", "        v = e",
                     "    found.append(v)"]
        body.append("    return v")
        if wrap == "plain":
            body.append("found.append(await probe(search('start')))")
        elif wrap == "nested_async":
            body += ["async def outer():", "    return await probe(list_documents())", "found.append(await outer())"]
        elif wrap == "lambda_await":
            body += ["p = (lambda: probe(llm('x')))", "found.append(await p())"]
        else:
            body += ["try:", "    found.append(await probe(search('f')))", "finally:", "    found.append(1)"]
        code = "\n".join(body)
        outcome, found = self.probe(code)
        self.assertIn(outcome.status, ("ok", "error"), (outcome, code))
        if outcome.status == "error":
            self.assertNotIn(outcome.error_type, ("InternalError", "RunnerError", "SystemError"), (outcome, code))
            self.assertIsNone(RUNNER_FILE.search(outcome.traceback or ""), (outcome.traceback, code))
            self.assertIsNone(RUNNER_FILE.search(outcome.error_message or ""), (outcome.error_message, code))
        for i, value in enumerate(found):
            self.assert_harmless(value, f"value {i} of {source} {steps} ({wrap})")
        # The executor serves the next cell as before.
        self.assertEqual(run(self.executor, "1 + 1")[0].value_repr, "2")



# The base class's own tests run in test_boundary; not twice.
for _name in dir(test_boundary.Boundary):
    if _name.startswith("test_"):
        setattr(GeneratedPrograms, _name, None)


if __name__ == "__main__":
    unittest.main()
