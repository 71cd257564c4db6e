package dev.quarry.sandbox;

import static dev.quarry.sandbox.SessionFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A scoped sandbox's {@code /documents} is a view of hard links built inside the documents
 * filesystem (issue 33, class 3): nothing is copied into the sandboxes' small shared run directory,
 * mount privacy holds, and what the sandbox sees stays whole while its documents are replaced or
 * deleted. The documents and run directories are tmpfs mounts of their own, as in production
 * (README, Security); the run directory's is 1 MiB, less than one scoped document, so a view copied
 * into it would fail at once. Mounting needs root, as {@code ./quarry test} runs.
 */
@DisplayName("Scoped sandboxes' views of their documents")
class ScopedViewsTest {
  private static final int MIB = 1 << 20;
  @TempDir Path tmp;
  private final List<Path> mounted = new ArrayList<>();

  @AfterEach
  void unmount() throws Exception {
    for (Path dir : mounted) {
      run("umount", "-l", dir.toString());
    }
  }

  /** A session fixture whose documents and run directories are tmpfs mounts of these sizes. */
  private SessionFixture fixture(String runSize, int maxActive) throws Exception {
    for (var dir : List.of(tmp.resolve("run"), tmp.resolve("documents"))) {
      Files.createDirectories(dir);
      assertThat(run("mount", "-t", "tmpfs", "-o", "size=" + (dir.endsWith("run") ? runSize : "64m") + ",mode=755",
          "tmpfs", dir.toString())).as("mounting a tmpfs on " + dir + " (the tests run as root)").isZero();
      mounted.add(0, dir);
    }
    return new SessionFixture(tmp, 0, SandboxLimits.DEFAULTS, maxActive, Duration.ofSeconds(60));
  }

  private static int run(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    p.getInputStream().readAllBytes();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    return p.exitValue();
  }

  private static String dockerExec(String container, String... command) throws Exception {
    List<String> args = new ArrayList<>(List.of("docker", "exec", container));
    args.addAll(List.of(command));
    Process p = new ProcessBuilder(args).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    return out;
  }

  /** A document in the tenant's tree as the store lays it out (files world-readable, like DocumentsFs's). */
  private static Path writeDocument(SandboxFixture fx, UUID tenant, UUID doc, String content, int padding)
      throws Exception {
    Path dir = Files.createDirectories(fx.documents(tenant).resolve(doc.toString()));
    Files.writeString(dir.resolve("metadata.json"), "{\"id\":\"" + doc + "\"}");
    Files.writeString(dir.resolve("content.txt"), content + "x".repeat(padding));
    Files.writeString(dir.resolve("items.jsonl"), "{\"text\":\"" + "y".repeat(padding) + "\"}\n");
    Files.writeString(dir.resolve("toc.json"), "{\"tree\":[]}");
    run("chmod", "-R", "a+rX", fx.documentsRoot.toString());
    return dir;
  }

  /** Bytes the filesystem of {@code dir} has in use. */
  private static long used(Path dir) throws IOException {
    FileStore store = Files.getFileStore(dir);
    return store.getTotalSpace() - store.getUnallocatedSpace();
  }

  private static String read(SessionFixture sf, SandboxSession s, String code) throws Exception {
    CellOutcome out = await(s.execute(code, sf.options(), null));
    assertThat(out.success()).as(out.toString()).isTrue();
    return out.stdout();
  }

  private static String readContent(SessionFixture sf, SandboxSession s, UUID doc) throws Exception {
    return read(sf, s, """
        from pathlib import Path
        print(sorted(p.name for p in Path('/documents').iterdir()))
        print((Path('/documents') / '%s' / 'content.txt').read_text()[:20])
        """.formatted(doc));
  }

  private static long inode(Path file) throws IOException {
    return ((Number) Files.getAttribute(file, "unix:ino")).longValue();
  }

  private static List<Path> viewsOf(SessionFixture sf) throws IOException {
    Path dir = sf.fx.documentsRoot.resolve(ScopedViews.DIR_NAME).resolve(sf.fx.gatewayId);
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(dir)) {
      return s.toList();
    }
  }

  @Test
  @DisplayName("one tenant's 8 scoped sandboxes of a 6 MiB document leave a 1 MiB run directory all but empty, share the document's bytes, and another tenant's scoped sandbox still opens")
  void nothingIsCopied() throws Exception {
    try (SessionFixture sf = fixture("1m", 10)) {
      UUID big = UUID.randomUUID();
      UUID hidden = UUID.randomUUID();
      UUID other = UUID.randomUUID();
      Path bigDir = writeDocument(sf.fx, sf.fx.tenantA, big, "BIG-DOCUMENT ", 3 * MIB);
      writeDocument(sf.fx, sf.fx.tenantA, hidden, "HIDDEN-CANARY ", 10);
      writeDocument(sf.fx, sf.fx.tenantB, other, "OTHER-TENANT ", 10);
      long runUsedBefore = used(sf.fx.runRoot);
      long documentsUsedBefore = used(sf.fx.documentsRoot);

      List<Future<SandboxSession>> opening = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        opening.add(sf.service.open(sf.fx.tenantA, new Scope(Set.of(big)), SessionFixture.Scripted.simple()));
      }
      List<SandboxSession> sessions = new ArrayList<>();
      for (Future<SandboxSession> f : opening) {
        sessions.add(await(f));
      }
      SandboxSession quiet = await(sf.service.open(sf.fx.tenantB, new Scope(Set.of(other)),
          SessionFixture.Scripted.simple()));
      try {
        long runUsed = used(sf.fx.runRoot) - runUsedBefore;
        long documentsUsed = used(sf.fx.documentsRoot) - documentsUsedBefore;
        System.out.printf("9 scoped sandboxes: run directory +%d bytes, documents filesystem +%d bytes%n",
            runUsed, documentsUsed);
        assertThat(runUsed).as("bytes 9 scoped sandboxes added to the run directory (sockets only)")
            .isLessThan(64 * 1024);
        assertThat(documentsUsed).as("bytes 9 views added to the documents filesystem (links, no copies)")
            .isLessThan(MIB);
        assertThat(readContent(sf, quiet, other)).isEqualTo("['" + other + "']\nOTHER-TENANT xxxxxxx\n");
        for (SandboxSession s : sessions) {
          assertThat(readContent(sf, s, big)).isEqualTo("['" + big + "']\nBIG-DOCUMENT xxxxxxx\n");
          Path view = sf.service.scopedViews().dir(s.id());
          for (String f : List.of("metadata.json", "content.txt", "items.jsonl", "toc.json")) {
            assertThat(inode(view.resolve(big.toString()).resolve(f))).as("the view's " + f + ", the tree's inode")
                .isEqualTo(inode(bigDir.resolve(f)));
          }
        }

        // What the sandbox can see: only its view, shown from the documents filesystem's root.
        String container = "quarry-" + sf.fx.gatewayId + "-" + sessions.get(0).id();
        String mountinfo = dockerExec(container, "cat", "/proc/self/mountinfo");
        assertThat(mountinfo).contains("/" + ScopedViews.DIR_NAME + "/" + sf.fx.gatewayId + "/" + sessions.get(0).id()
            + " /documents ").doesNotContain(tmp.toString()).doesNotContain(tmp.toRealPath().toString());
        assertThat(dockerExec(container, "find", "/documents").lines().sorted().toList()).containsExactly(
            "/documents", "/documents/" + big, "/documents/" + big + "/content.txt",
            "/documents/" + big + "/items.jsonl", "/documents/" + big + "/metadata.json",
            "/documents/" + big + "/toc.json");
      } finally {
        for (SandboxSession s : sessions) {
          await(s.close());
        }
        await(quiet.close());
      }
      assertThat(viewsOf(sf)).as("views left after the sandboxes closed").isEmpty();
      assertThat(bigDir.resolve("content.txt")).as("the tenant's own file").exists();
      sf.assertClean();
    }
  }

  @Test
  @DisplayName("a document replaced, then deleted, while a scoped sandbox runs: the sandbox goes on reading the version it started with, whole")
  void replacedAndDeleted() throws Exception {
    try (SessionFixture sf = fixture("1m", 4)) {
      UUID doc = UUID.randomUUID();
      Path dir = writeDocument(sf.fx, sf.fx.tenantA, doc, "VERSION-ONE ", 1000);
      SandboxSession s = await(sf.service.open(sf.fx.tenantA, new Scope(Set.of(doc)), SessionFixture.Scripted.simple()));
      try {
        assertThat(readContent(sf, s, doc)).isEqualTo("['" + doc + "']\nVERSION-ONE xxxxxxxx\n");
        // As DocumentsFs replaces a document: a new directory renamed into place, the old one deleted.
        Path staging = Files.createDirectories(sf.fx.documentsRoot.resolve(".staging").resolve("new"));
        Files.writeString(staging.resolve("content.txt"), "VERSION-TWO");
        Path old = Files.createDirectories(sf.fx.documentsRoot.resolve(".staging").resolve("old"));
        Files.move(dir, old.resolve(doc.toString()), StandardCopyOption.ATOMIC_MOVE);
        Files.move(staging, dir, StandardCopyOption.ATOMIC_MOVE);
        deleteTree(old);
        assertThat(readContent(sf, s, doc)).isEqualTo("['" + doc + "']\nVERSION-ONE xxxxxxxx\n");
        // ... and as it deletes one.
        deleteTree(dir);
        assertThat(readContent(sf, s, doc)).isEqualTo("['" + doc + "']\nVERSION-ONE xxxxxxxx\n");
        assertThat(read(sf, s, "from pathlib import Path\nprint(len(Path('/documents/%s/items.jsonl').read_text()))"
            .formatted(doc))).isEqualTo("1012\n");
      } finally {
        await(s.close());
      }
      // A sandbox opened now sees the tree as it is: the document is gone.
      SandboxSession later = await(sf.service.open(sf.fx.tenantA, new Scope(Set.of(doc)),
          SessionFixture.Scripted.simple()));
      try {
        assertThat(read(sf, later, "from pathlib import Path\nprint(sorted(p.name for p in Path('/documents').iterdir()))"))
            .isEqualTo("[]\n");
      } finally {
        await(later.close());
      }
      assertThat(viewsOf(sf)).isEmpty();
      sf.assertClean();
    }
  }

  @Test
  @DisplayName("a scoped sandbox whose launch fails leaves no view behind")
  void failedLaunchLeavesNoView() throws Exception {
    SandboxFixture fx = new SandboxFixture(tmp.resolve("missing"));
    Vertx vertx = Vertx.vertx();
    UUID doc = UUID.randomUUID();
    writeDocument(fx, fx.tenantA, doc, "TEXT ", 10);
    SandboxService missing = new SandboxService(vertx, new SandboxSettings(SandboxSettings.DEFAULT_DOCKER_HOST,
        "quarry-no-such-image:none", List.of(), "", fx.gatewayId, fx.runRoot, SandboxLimits.DEFAULTS,
        SandboxLimits.MAXIMUMS, 0, Duration.ofMinutes(10), false), TenantTrees.fixed(vertx, fx.documentsRoot));
    try {
      assertThatThrownBy(() -> await(missing.open(fx.tenantA, new Scope(Set.of(doc)),
          SessionFixture.Scripted.simple()))).isInstanceOf(ExecutionException.class)
          .cause().isInstanceOf(ContainerException.class);
      Path views = fx.documentsRoot.resolve(ScopedViews.DIR_NAME).resolve(fx.gatewayId);
      try (Stream<Path> left = Files.isDirectory(views) ? Files.list(views) : Stream.empty()) {
        assertThat(left.toList()).as("views left by the failed launch").isEmpty();
      }
      assertThat(missing.liveSandboxIds()).isEmpty();
    } finally {
      await(missing.close());
      await(vertx.close());
      fx.close();
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
