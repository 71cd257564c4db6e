"""pathlib.Path stand-in: read-only, confined to /documents, symlinks resolved."""
import os
import shutil
import tempfile
import unittest

import support
from quarry_runner.standins import DocumentsFs


class PathConfinement(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="quarry-fs-")
        self.documents = support.make_documents(self.tmp)
        self.reads = []
        self.Path = DocumentsFs(str(self.documents), on_read=self.reads.append).path_class

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_documents_are_listed_and_read_by_virtual_path(self):
        Path = self.Path
        self.assertEqual([p.name for p in Path("/documents").iterdir()], ["doc-1", "doc-2"])
        self.assertEqual(Path("/documents/doc-1/content.txt").read_text(), "alpha text\n")
        self.assertEqual((Path("/documents") / "doc-2" / "content.txt").read_bytes(), b"beta text\n")
        self.assertEqual(Path("doc-1/metadata.json"), Path("/documents/doc-1/metadata.json"))
        self.assertEqual(self.reads, ["/documents/doc-1/content.txt", "/documents/doc-2/content.txt"])

    def test_glob_finds_files_and_skips_symlinks_that_leave_the_root(self):
        Path = self.Path
        self.assertEqual([str(p) for p in Path("/documents").glob("*/metadata.json")],
                         ["/documents/doc-1/metadata.json", "/documents/doc-2/metadata.json"])
        everything = [str(p) for p in Path("/documents").rglob("*")]
        self.assertIn("/documents/doc-1/content.txt", everything)
        for escaping in ("escape-file", "escape-dir", "passwd", "secret.txt"):
            self.assertFalse(any(p.endswith(escaping) for p in everything), everything)

    def test_path_traversal_is_refused(self):
        Path = self.Path
        for path in ("/documents/../other-tenant/secret.txt", "/documents/doc-1/../../other-tenant/secret.txt",
                     "../other-tenant/secret.txt", "/documents/../../../../etc/passwd"):
            with self.subTest(path):
                with self.assertRaises(PermissionError) as caught:
                    Path(path).read_text()
                self.assertIn("outside /documents", str(caught.exception))

    def test_absolute_paths_outside_the_root_are_refused_for_every_access(self):
        Path = self.Path
        for path in ("/etc/passwd", "/proc/self/environ", "/dev/zero", "/tmp", "/", self.tmp):
            for access in ("read_text", "read_bytes", "exists", "is_file", "is_dir", "iterdir", "resolve"):
                with self.subTest(path=path, access=access):
                    with self.assertRaises(PermissionError):
                        getattr(Path(path), access)()
            with self.assertRaises(PermissionError):
                Path(path).glob("*")

    def test_the_parent_of_the_root_cannot_be_listed(self):
        with self.assertRaises(PermissionError):
            self.Path("/documents").parent.iterdir()

    def test_symlinks_out_of_the_root_are_refused(self):
        Path = self.Path
        for path in ("/documents/doc-1/escape-file", "/documents/doc-1/escape-dir/secret.txt", "/documents/doc-2/passwd"):
            with self.subTest(path):
                with self.assertRaises(PermissionError) as caught:
                    Path(path).read_text()
                self.assertIn("resolves outside /documents", str(caught.exception))
        with self.assertRaises(PermissionError):
            Path("/documents/doc-1/escape-dir").iterdir()
        self.assertEqual(self.reads, [])

    def test_writes_are_refused_and_leave_nothing(self):
        Path = self.Path
        target = Path("/documents/pwned.txt")
        for method, args in (("write_text", ("x",)), ("write_bytes", (b"x",)), ("touch", ()), ("mkdir", ()),
                             ("unlink", ()), ("symlink_to", ("/etc/passwd",)), ("rename", ("/documents/y",)),
                             ("open", ("w",))):
            with self.subTest(method):
                with self.assertRaises(PermissionError) as caught:
                    getattr(target, method)(*args)
                self.assertIn("read-only", str(caught.exception))
        self.assertFalse(os.path.lexists(self.documents / "pwned.txt"))

    def test_errors_name_the_virtual_path_not_the_real_one(self):
        with self.assertRaises(FileNotFoundError) as caught:
            self.Path("/documents/doc-9/content.txt").read_text()
        self.assertIn("/documents/doc-9/content.txt", str(caught.exception))
        self.assertNotIn(self.tmp, str(caught.exception))

    def test_only_regular_files_are_read(self):
        with self.assertRaises(IsADirectoryError):
            self.Path("/documents/doc-1").read_text()

    def test_missing_documents_are_false_not_errors(self):
        self.assertFalse(self.Path("/documents/nope").exists())
        self.assertTrue(self.Path("/documents/doc-1").is_dir())


if __name__ == "__main__":
    unittest.main()
