package dev.quarry.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Example;

@Label("Host paths are replaced by tokens in what clients see; the API's own paths are not")
class HostPathsTest {
  static {
    HostPaths.protect("QUARRY_DATA_DIR", Path.of("/srv/quarry-data-x1"));
    HostPaths.protect("QUARRY_SANDBOX_RUN_DIR", Path.of("relative/run-x1"));
  }

  @Provide
  Arbitrary<String> segments() {
    return Arbitraries.strings().withCharRange('a', 'z').numeric().withChars('.', '-', '_').ofMinLength(1)
        .ofMaxLength(12).filter(s -> !s.equals(".") && !s.equals(".."));
  }

  @Provide
  Arbitrary<String> hostPaths() {
    Arbitrary<String> root = Arbitraries.of("/srv/quarry-data-x1", "relative/run-x1", "/tmp", "/var/lib/docker",
        "/home/someone", "/root", "/work/wt/x", System.getProperty("java.io.tmpdir"), System.getProperty("user.dir"),
        Path.of("relative/run-x1").toAbsolutePath().toString());
    return Combinators.combine(root, segments().list().ofMaxSize(4))
        .as((r, tail) -> tail.isEmpty() ? r : r + "/" + String.join("/", tail));
  }

  @Provide
  Arbitrary<String> frames() {
    return Arbitraries.of("%s", "cannot create %s: No space left on device", "(%s)", "'%s'", "\"%s\"", "file %s,",
        "at %s;", "[%s]", "%s: Permission denied", "bind source path does not exist: %s");
  }

  @Property(tries = 500)
  void everyHostPathIsReplaced(@ForAll("hostPaths") String path, @ForAll("frames") String frame) {
    String message = String.format(frame, path);
    String shown = HostPaths.redact(message);
    assertThat(shown).as(message).doesNotContain(path).doesNotContain("/srv/").doesNotContain("/tmp/")
        .doesNotContain("/var/").doesNotContain("/home/").doesNotContain("/root").doesNotContain("/work/")
        .doesNotContain("relative/run-x1");
    assertThat(HostPaths.holdsHostPath(message)).isTrue();
    // What is not a path survives.
    assertThat(shown).startsWith(frame.substring(0, frame.indexOf("%s")));
  }

  @Example
  void theApiAndTheSandboxKeepTheirPaths() {
    for (String kept : List.of("no such route: GET /v1/documents/abc", "send the path as documented, e.g."
        + " /v1/documents/{id}", "GET /mcp is the server's event stream", "/documents/3f2a/content.txt",
        "/healthz", "https://quarry.example/v1/tmp/x", "a/tmp/b", "~/tmp/x", "file:///var/x", "ratio 1/2")) {
      assertThat(HostPaths.redact(kept)).as(kept).isEqualTo(kept);
      assertThat(HostPaths.holdsHostPath(kept)).as(kept).isFalse();
    }
  }

  @Example
  void namedRootsKeepTheirSettingsNames() {
    assertThat(HostPaths.redact("cannot write /srv/quarry-data-x1/uploads/up-1: No space left on device"))
        .isEqualTo("cannot write <QUARRY_DATA_DIR>/uploads/up-1: No space left on device");
    assertThat(HostPaths.redact("at relative/run-x1/gw/sb")).isEqualTo("at <QUARRY_SANDBOX_RUN_DIR>/gw/sb");
    assertThat(HostPaths.redact(null)).isNull();
  }

  @Example
  void aFilesystemFailureIsToldByItsReason() {
    assertThat(HostPaths.reason(new FileSystemException("/srv/quarry-data-x1/a", null, "No space left on device")))
        .isEqualTo("No space left on device");
    assertThat(HostPaths.reason(new NoSuchFileException("/tmp/x"))).isEqualTo("no such file or directory");
    assertThat(HostPaths.reason(new AccessDeniedException("/tmp/x"))).isEqualTo("permission denied");
    assertThat(HostPaths.reason(new java.io.UncheckedIOException(new NoSuchFileException("/tmp/x"))))
        .isEqualTo("no such file or directory");
    assertThat(HostPaths.reason(new IllegalStateException("at /var/lib/x"))).isEqualTo("at <host path>");
  }
}
