"""Running cells: namespace, await, REPL value, output, limits, builtins, callbacks."""
import shutil
import tempfile
import unittest

import support
from support import FakeGateway, run
from quarry_runner.executor import Executor


class ExecutorTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="quarry-exec-")
        self.documents = support.make_documents(self.tmp)
        self.gateway = FakeGateway()
        self.reads = []
        self.executor = Executor(self.gateway, str(self.documents), on_file_read=self.reads.append)

    def tearDown(self):
        self.executor.close()
        shutil.rmtree(self.tmp)

    def ok(self, code, **limits):
        outcome, stdout, stderr = run(self.executor, code, **limits)
        self.assertEqual(outcome.status, "ok", f"{outcome.error_type}: {outcome.error_message}\n{outcome.traceback}")
        return outcome, stdout, stderr

    def error(self, code, **limits):
        outcome, stdout, _ = run(self.executor, code, **limits)
        self.assertEqual(outcome.status, "error", outcome)
        return outcome, stdout


class Namespace(ExecutorTest):
    def test_variables_and_functions_persist_across_cells(self):
        self.ok("x = 41\ndef inc(v):\n    return v + 1")
        outcome, _, _ = self.ok("inc(x)")
        self.assertEqual(outcome.value_repr, "42")

    def test_a_coroutine_made_in_one_cell_is_awaited_in_the_next(self):
        self.ok("pending = search('later')")
        outcome, _, _ = self.ok("(await pending)[0]['content']")
        self.assertEqual(outcome.value_repr, "'hit for later'")

    def test_separate_executors_share_nothing(self):
        self.ok("secret = 'mine'")
        other = Executor(FakeGateway(), str(self.documents))
        try:
            outcome, _ = run(other, "secret")[:2]
            self.assertEqual((outcome.status, outcome.error_type), ("error", "NameError"))
        finally:
            other.close()

    def test_preloaded_documents_define_the_documents_variable(self):
        outcome, _, _ = run(self.executor, "[(d['id'], d['title'], d['content']) for d in documents]",
                            preload_document_ids=["doc-2", "doc-1"])
        self.assertEqual(outcome.value_repr, "[('doc-2', 'Beta', 'beta text\\n'), ('doc-1', 'Alpha', 'alpha text\\n')]")

    def test_preloading_refuses_an_id_that_is_a_path(self):
        outcome, _, _ = run(self.executor, "1", preload_document_ids=["../other-tenant"])
        self.assertEqual(outcome.status, "error")
        self.assertIn("preloading documents", outcome.error_message)


class TopLevelAwaitAndReplValue(ExecutorTest):
    def test_top_level_await_of_each_callback(self):
        outcome, stdout, _ = self.ok(
            "hits = await search('engines', limit=3)\ndocs = await list_documents()\n"
            "answer = await llm('classify')\nprint(len(hits), docs[0]['id'], answer)")
        self.assertEqual(stdout, "1 doc-1 completion of 'classify'\n")
        self.assertEqual(self.gateway.calls, [("search", {"query": "engines", "limit": 3}),
                                              ("list_documents", {}), ("llm", {"prompt": "classify"})])

    def test_the_last_expression_is_shown_as_repr_but_not_none(self):
        self.assertEqual(self.ok("'a' + 'b'")[0].value_repr, "'ab'")
        self.assertEqual(self.ok("print('x')")[0].value_repr, "")
        self.assertEqual(self.ok("x = 3")[0].value_repr, "")
        self.assertEqual(self.ok("await llm('p')")[0].value_repr, "\"completion of 'p'\"")

    def test_callback_arguments_are_checked_in_the_sandbox(self):
        for code, message in (("await search('')", "non-empty"), ("await search('q', limit=0)", "1 to 100"),
                              ("await search('q', tenant_id='t2')", "unexpected keyword"),
                              ("await llm('x' * 2_000_000)", "over the")):
            with self.subTest(code):
                outcome, _ = self.error(code)
                self.assertIn(message, outcome.error_message)
        self.assertEqual(self.gateway.calls, [])


class Output(ExecutorTest):
    def test_stdout_is_captured_in_order(self):
        _, stdout, _ = self.ok("for i in range(3):\n    print(i)")
        self.assertEqual(stdout, "0\n1\n2\n")

    def test_output_over_the_cap_is_cut_with_a_marker_and_is_not_an_error(self):
        outcome, stdout, _ = self.ok("for i in range(100):\n    print('x' * 100)", max_output_chars=1000)
        self.assertTrue(outcome.truncated)
        self.assertTrue(stdout.startswith("x" * 100 + "\n"))
        self.assertIn("[output truncated: over the limit of 1000 characters]", stdout)
        self.assertEqual(len(stdout) - len("\n[output truncated: over the limit of 1000 characters]\n"), 1000)

    def test_the_default_cap_is_50000_characters(self):
        outcome, stdout, _ = self.ok("print('y' * 60000)")
        self.assertTrue(outcome.truncated)
        self.assertEqual(stdout.count("y"), 50_000)

    def test_the_repl_value_counts_toward_the_cap(self):
        outcome, stdout, _ = self.ok("print('a' * 8)\n'b' * 10", max_output_chars=12)
        self.assertEqual(stdout, "a" * 8 + "\n")
        self.assertTrue(outcome.truncated)
        self.assertTrue(outcome.value_repr.startswith("'bb\n[output truncated"), outcome.value_repr)

    def test_unpaired_surrogates_come_out_escaped_as_valid_utf8(self):
        _, stdout, _ = self.ok("print('\\ud800 x \\x00 \\udcff')")
        stdout.encode("utf-8")
        self.assertIn("\\ud800", stdout)


class Language(ExecutorTest):
    def test_each_supported_construct_runs(self):
        from test_validator import ALLOWED
        for name, code in ALLOWED.items():
            with self.subTest(name):
                self.ok(code)

    def test_each_rejected_construct_comes_back_as_a_typed_error_naming_it_and_its_line(self):
        from test_validator import REJECTED
        for code, construct, line in REJECTED:
            with self.subTest(code):
                outcome, stdout = self.error(code)
                self.assertEqual(outcome.error_type, "ForbiddenConstruct")
                self.assertTrue(outcome.error_message.startswith(f"line {line}: {construct} is not allowed"),
                                outcome.error_message)


class Errors(ExecutorTest):
    def test_a_rejected_construct_runs_nothing(self):
        outcome, stdout = self.error("print('ran')\nclass A:\n    pass")
        self.assertEqual(outcome.error_type, "ForbiddenConstruct")
        self.assertEqual(outcome.error_message, "line 2: 'class' is not allowed (define functions instead)")
        self.assertEqual(stdout, "")

    def test_the_traceback_shows_only_the_cells_frames(self):
        outcome, _ = self.error("def f(x):\n    return 1 / x\nf(0)")
        self.assertEqual(outcome.error_type, "ZeroDivisionError")
        self.assertEqual(outcome.traceback, "Traceback (most recent call last):\n  line 3, in <cell>\n    f(0)\n"
                                            "  line 2, in f\n    return 1 / x\nZeroDivisionError: division by zero")
        self.assertNotIn("quarry_runner", outcome.traceback)

    def test_runaway_recursion_is_a_typed_error_with_a_short_traceback(self):
        outcome, _ = self.error("def f(n):\n    return f(n + 1)\nf(0)")
        self.assertEqual(outcome.error_type, "RecursionError")
        self.assertIn("more frames", outcome.traceback)
        self.assertLess(len(outcome.traceback), 2000)

    def test_a_callback_error_is_raised_in_the_cell_with_its_type(self):
        def failing(kind, arguments):
            from quarry_runner.executor import LimitExceeded
            raise LimitExceeded("search limit of 2 reached")
        executor = Executor(FakeGateway(failing), str(self.documents))
        try:
            outcome, stdout, _ = run(executor, "try:\n    await search('q')\nexcept LimitExceeded as e:\n    print('caught', e)")
            self.assertEqual((outcome.status, stdout), ("ok", "caught search limit of 2 reached\n"))
        finally:
            executor.close()

    def test_a_syntax_error_names_its_line(self):
        outcome, _ = self.error("x = 1\ny = (")
        self.assertEqual(outcome.error_type, "SyntaxError")
        self.assertTrue(outcome.error_message.startswith("line 2: "), outcome.error_message)


class Limits(ExecutorTest):
    def test_a_busy_loop_ends_with_timeout_and_the_namespace_survives(self):
        self.ok("kept = 'yes'")
        outcome, _, _ = run(self.executor, "while True:\n    pass", wall_time_ms=200)
        self.assertEqual((outcome.status, outcome.error_type), ("timeout", "Timeout"))
        self.assertGreaterEqual(outcome.duration_ms, 200)
        self.assertLess(outcome.duration_ms, 2000)
        self.assertEqual(self.ok("kept")[0].value_repr, "'yes'")

    def test_a_timeout_is_not_swallowed_by_except_exception(self):
        outcome, _, _ = run(self.executor, "while True:\n    try:\n        pass\n    except Exception:\n        pass",
                            wall_time_ms=200)
        self.assertEqual(outcome.status, "timeout")

    def test_a_cell_waiting_on_a_callback_times_out(self):
        executor = Executor(FakeGateway(lambda kind, arguments: FakeGateway.NO_REPLY), str(self.documents))
        try:
            outcome, _, _ = run(executor, "await search('q')", wall_time_ms=200)
            self.assertEqual(outcome.status, "timeout")
            self.assertEqual(run(executor, "1 + 1")[0].value_repr, "2")
        finally:
            executor.close()

    def test_endless_output_is_capped_and_timed_out(self):
        outcome, stdout, _ = run(self.executor, "while True:\n    print('A' * 100000)", wall_time_ms=300)
        self.assertEqual(outcome.status, "timeout")
        self.assertTrue(outcome.truncated)
        self.assertLess(len(stdout), 50_100)

    def test_a_cell_that_mostly_calls_other_code_stops_at_its_wall_time(self):
        # The timer lands in json's frames or the stand-ins' nearly every time: the cell's own next
        # line raises the interrupt.
        for code in ("import json\nwhile True:\n    json.dumps({'a': 'A' * 100000})",
                     "from pathlib import Path\nwhile True:\n    for p in Path('/documents').rglob('*'):\n"
                     "        if p.is_file():\n            p.read_text()"):
            with self.subTest(code=code):
                outcome, _, _ = run(self.executor, code, wall_time_ms=300)
                self.assertEqual(outcome.status, "timeout")
                self.assertLess(outcome.duration_ms, 1_300)
        self.assertEqual(self.ok("1 + 1")[0].value_repr, "2")

    def test_a_cell_that_mostly_prints_stops_at_its_wall_time(self):
        # The timer lands in the runner's own output code nearly every time; the interrupt must
        # still end the cell at once, not whenever it happens to fire inside the cell's own frame.
        for size in (1_000, 100_000, 1_000_000):
            with self.subTest(size=size):
                outcome, _, _ = run(self.executor, f"while True:\n    print('A' * {size})", wall_time_ms=300)
                self.assertEqual(outcome.status, "timeout")
                self.assertLess(outcome.duration_ms, 1_300)


class Builtins(ExecutorTest):
    def test_escape_hatches_are_not_defined(self):
        for name in ("open", "eval", "exec", "compile", "globals", "locals", "vars", "dir", "type",
                     "object", "setattr", "delattr", "breakpoint", "input", "help", "memoryview",
                     "super", "classmethod", "BaseException", "exit"):
            with self.subTest(name):
                outcome, _ = self.error(f"{name}")
                self.assertEqual(outcome.error_type, "NameError")

    def test_getattr_and_hasattr_refuse_internal_names(self):
        for name in ("__class__", "_x", "f_globals", "tb_frame", "gi_frame", "send", "format"):
            with self.subTest(name):
                outcome, _ = self.error(f"getattr((), {name!r})")
                self.assertEqual(outcome.error_type, "AttributeError")
                self.assertIn(f"attribute '{name}' of a tuple object is not available in the sandbox",
                              outcome.error_message)
        self.assertEqual(self.ok("hasattr([], '__len__'), hasattr([], 'append')")[0].value_repr, "(False, True)")
        self.assertEqual(self.ok("getattr([3, 1], 'index')(1)")[0].value_repr, "1")

    def test_imports_bind_the_stand_ins(self):
        outcome, _, _ = self.ok("import json, re, math\nfrom pathlib import Path\n"
                                "(json.loads(json.dumps({'a': [1]})), re.findall(r'\\d+', 'a1b22'), math.sqrt(16), str(Path('x')))")
        self.assertEqual(outcome.value_repr, "({'a': [1]}, ['1', '22'], 4.0, '/documents/x')")

    def test_the_stand_ins_hide_the_real_modules(self):
        for code in ("import pathlib\npathlib.os", "import pathlib\npathlib.sys", "import re\nre.functools",
                     "import json\njson.decoder", "import re\nre.sre_compile"):
            with self.subTest(code):
                outcome, _ = self.error(code)
                self.assertEqual(outcome.error_type, "AttributeError")
                self.assertIn("in the sandbox", outcome.error_message)


if __name__ == "__main__":
    unittest.main()
