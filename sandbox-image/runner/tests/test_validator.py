"""Every rule of docs/CONTRACT.md's restricted language, at the validator."""
import unittest

import support  # noqa: F401  (import paths)
from quarry_runner.validator import ForbiddenConstruct, MAX_AST_DEPTH, MAX_SOURCE_CHARS, validate

ALLOWED = {
    "variables and arithmetic": "x = 1\ny = x * 2 + 3 // 2 - 4 % 3 ** 2\nx += y",
    "strings and f-strings": "name = 'a'\ns = f'{name!r:>10} {1.5:.2f}' + \"b\" * 2",
    "lists, dicts, tuples, sets": "a = [1, 2]\nb = {'k': a}\nc = (1,)\nd = {1, 2}\ne = a[0:1]\n*f, g = a",
    "for and while": "for i in range(3):\n    pass\nwhile False:\n    break\nelse:\n    pass",
    "if": "x = 1\nif x:\n    y = 1\nelif x > 2:\n    y = 2\nelse:\n    y = 3",
    "comprehensions": "a = [i for i in range(3) if i]\nb = {i: i for i in a}\nc = {i for i in a}\nd = sum(i for i in a)",
    "def and lambda": "def f(a, b=1, *args, c=2, **kw):\n    return a\ng = lambda x: x + 1",
    "async def and await": "async def f():\n    return await search('q')\nx = await f()",
    "try/except/finally": "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    m = str(e)\nfinally:\n    pass",
    "raise and assert": "try:\n    raise ValueError('x')\nexcept ValueError:\n    pass\nassert True",
    "map, filter, getattr, sorted": "a = list(map(str, [1]))\nb = list(filter(None, a))\nc = getattr(a, 'count')\nd = sorted(a, key=len)\na.sort(key=len)",
    "print": "print('x', end='')",
    "imports of the stand-ins": "import json\nimport re, math\nimport pathlib\nfrom pathlib import Path\nfrom json import loads as l",
    "walrus, conditional, del": "if (n := 3) > 2:\n    x = 1 if n else 2\ndel x",
    "format on a literal": "'{0} {k} {0[1]}'.format('ab', k=1)",
    "a single-underscore name": "for _ in range(2):\n    pass\n_x = 1",
}

# (code, construct named in the message, line)
REJECTED = [
    ("import os", "import of 'os'", 1),
    ("x = 1\nimport json, subprocess", "import of 'subprocess'", 2),
    ("from os import path", "import of 'os'", 1),
    ("from builtins import open", "import of 'builtins'", 1),
    ("from pathlib import os", "import of 'pathlib.os'", 1),
    ("from json import *", "'from json import *'", 1),
    ("from . import x", "relative import", 1),
    ("import os.path", "import of 'os.path'", 1),
    ("\nclass A:\n    pass", "'class'", 2),
    ("def g():\n    yield 1", "'yield' (generator)", 2),
    ("def g():\n    yield from [1]", "'yield from' (generator)", 2),
    ("match 1:\n    case 1:\n        pass", "'match'", 1),
    ("def d(f):\n    return f\n@d\ndef g():\n    pass", "decorator", 3),
    ("with x:\n    pass", "'with'", 1),
    ("async def f():\n    async with x:\n        pass", "'async with'", 2),
    ("def f():\n    global x", "'global'", 2),
    ("def f():\n    x = 1\n    def g():\n        nonlocal x", "'nonlocal'", 4),
    ("().__class__", "attribute '__class__'", 1),
    ("x = 1\nx._private", "attribute '_private'", 2),
    ("f = search.__globals__", "attribute '__globals__'", 1),
    ("tb.tb_frame", "attribute 'tb_frame'", 1),
    ("frame.f_globals", "attribute 'f_globals'", 1),
    ("frame.f_back", "attribute 'f_back'", 1),
    ("g.gi_frame", "attribute 'gi_frame'", 1),
    ("c.cr_frame", "attribute 'cr_frame'", 1),
    ("c.co_code", "attribute 'co_code'", 1),
    ("f.func_globals", "attribute 'func_globals'", 1),
    ("search('x').send(None)", "attribute 'send'", 1),
    ("c.throw(ValueError)", "attribute 'throw'", 1),
    ("int.mro()", "attribute 'mro'", 1),
    ("f'{x.__class__}'", "attribute '__class__'", 1),
    ("x.__class__ = 1", "attribute '__class__'", 1),
    ("__import__('os')", "name '__import__'", 1),
    ("b = __builtins__", "name '__builtins__'", 1),
    ("def f(__x):\n    pass", "name '__x'", 1),
    ("t = 'x'\nt.format(1)", "'.format' on a non-literal string", 2),
    ("str.format('{0}', 1)", "'.format' on a non-literal string", 1),
    ("'{0.__globals__}'.format(f)", "format field '{0.__globals__}'", 1),
    ("'{0:{1.real}}'.format(1, 2)", "format field '{1.real}'", 1),
    ("'{0.x}'.format_map(d)", "format field '{0.x}'", 1),
    ("try:\n    pass\nexcept* ValueError:\n    pass", "'except*'", 1),
]


class AllowedConstructs(unittest.TestCase):
    def test_each_supported_construct_passes_the_validator(self):
        for name, code in ALLOWED.items():
            with self.subTest(name):
                validate(code)


class RejectedConstructs(unittest.TestCase):
    def test_each_rejected_construct_is_named_with_its_line(self):
        for code, construct, line in REJECTED:
            with self.subTest(code):
                with self.assertRaises(ForbiddenConstruct) as caught:
                    validate(code)
                self.assertEqual(caught.exception.construct, construct)
                self.assertEqual(caught.exception.line, line)
                self.assertIn(construct, str(caught.exception))
                self.assertTrue(str(caught.exception).startswith(f"line {line}: "), str(caught.exception))

    def test_enormous_code_is_refused_before_parsing(self):
        with self.assertRaises(ForbiddenConstruct) as caught:
            validate("x = 1\n" * (MAX_SOURCE_CHARS // 6 + 1))
        self.assertIn("characters", str(caught.exception))

    def test_deep_nesting_is_refused_not_crashed_on(self):
        for code in ("x = " + "-" * 100_000 + "1",           # parser's own recursion limit
                     "x = 1" + " + 1" * 10_000,               # a left-deep tree the parser accepts
                     "x = " + "-" * (MAX_AST_DEPTH + 50) + "1",
                     "x = " + "[" * 300 + "]" * 300):         # the tokenizer's limit
            with self.subTest(code[:12]):
                try:
                    validate(code)
                except ForbiddenConstruct as e:
                    self.assertIn("deeply nested code", str(e))
                except SyntaxError as e:  # the tokenizer's own limit on nesting: also clean
                    self.assertIn("nested", str(e))
                else:
                    self.fail("deep nesting was accepted")

    def test_syntax_errors_surface_as_syntax_errors(self):
        with self.assertRaises(SyntaxError):
            validate("x = (")


if __name__ == "__main__":
    unittest.main()
