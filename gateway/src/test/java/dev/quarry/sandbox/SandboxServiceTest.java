package dev.quarry.sandbox;

import static dev.quarry.sandbox.SessionFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayName("The sandbox service")
class SandboxServiceTest {
  @TempDir Path tmp;

  @Test
  @DisplayName("a sandbox whose container stops before its runner is Ready fails to start, saying so, and leaves nothing")
  void containerStoppedBeforeReady() throws Exception {
    // A container killed (or crashed) while it starts: no runner ever connects. The base image, which
    // has no runner entrypoint, runs the command as given.
    SandboxFixture.ensureBaseImage();
    SessionFixture sf = new SessionFixture(tmp, 0, SandboxLimits.DEFAULTS, SandboxFixture.IMAGE,
        List.of("sh", "-c", "sleep 1; exit 3"));
    try {
      assertThatThrownBy(() -> await(sf.service.open(sf.fx.tenantA, Scope.ALL, SessionFixture.Scripted.simple())))
          .isInstanceOf(ExecutionException.class)
          .hasMessageContaining("stopped (exit status 3) before the runner was ready");
      sf.assertClean();
    } finally {
      sf.close();
    }
  }

  @Test
  @DisplayName("hands out pooled sandboxes only once their runner is Ready, and removes all on close")
  void warmPool() throws Exception {
    SessionFixture sf = new SessionFixture(tmp, 2);
    try {
      await(sf.service.warm(sf.fx.tenantA));
      Set<String> pooled = sf.service.liveSandboxIds();
      assertThat(pooled).hasSize(2);
      SandboxSession s = await(sf.service.open(sf.fx.tenantA, Scope.ALL, SessionFixture.Scripted.simple()));
      assertThat(pooled).contains(s.id());
      assertThat(s.tenantId()).isEqualTo(sf.fx.tenantA);
      assertThat(await(s.execute("await list_documents()", sf.options(), null)).stdout())
          .isEqualTo("[{'id': 'd1', 'title': 'T'}]");
      // Shutdown while a session is open: the session, the pool and the refill all go.
      await(sf.service.close());
      assertThatThrownBy(() -> await(s.execute("1", sf.options(), null)))
          .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(IllegalStateException.class);
      assertThatThrownBy(() -> await(sf.service.open(sf.fx.tenantA, Scope.ALL, SessionFixture.Scripted.simple())))
          .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(IllegalStateException.class);
      assertThat(sf.service.active()).isZero();
      sf.assertClean();
    } finally {
      sf.close();
    }
  }

  @Test
  @DisplayName("runs 20 sandboxes at once, each cell with a callback, and leaves nothing behind")
  void concurrent() throws Exception {
    SessionFixture sf = new SessionFixture(tmp, 0, SandboxLimits.DEFAULTS, 20, SandboxSettings.DEFAULT_MAX_WAIT);
    try {
      List<Future<CellOutcome>> cells = new ArrayList<>();
      List<Future<SandboxSession>> opened = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        int n = i;
        Future<SandboxSession> session = sf.service.open(n % 2 == 0 ? sf.fx.tenantA : sf.fx.tenantB, Scope.ALL,
            SessionFixture.Scripted.simple());
        opened.add(session);
        cells.add(session.compose(s -> s.execute("hits = await search('q" + n + "')\nhits[-1]['query']",
            sf.options(), null)));
      }
      Set<String> ids = new HashSet<>();
      for (int i = 0; i < 20; i++) {
        CellOutcome out = await(cells.get(i));
        assertThat(out.success()).as(out.toString()).isTrue();
        assertThat(out.stdout()).isEqualTo("'q" + i + "'");
        ids.add(await(opened.get(i)).id());
      }
      assertThat(ids).hasSize(20);
      assertThat(sf.service.active()).isEqualTo(20);
      for (Future<SandboxSession> s : opened) {
        await(await(s).close());
      }
      assertThat(sf.service.active()).isZero();
      sf.assertClean();
    } finally {
      sf.close();
    }
  }

  @Test
  @DisplayName("a scoped sandbox sees only its documents under /documents, from its own directory")
  void scopedDocuments() throws Exception {
    SessionFixture sf = new SessionFixture(tmp, 0);
    try {
      java.util.UUID doc = java.util.UUID.randomUUID();
      java.util.UUID hidden = java.util.UUID.randomUUID();
      for (java.util.UUID id : List.of(doc, hidden)) {
        Path dir = java.nio.file.Files.createDirectories(sf.fx.documents(sf.fx.tenantA).resolve(id.toString()));
        java.nio.file.Files.writeString(dir.resolve("content.txt"), "text of " + id);
      }
      SandboxSession s = await(sf.service.open(sf.fx.tenantA, new Scope(Set.of(doc)),
          SessionFixture.Scripted.simple()));
      CellOutcome out = await(s.execute("""
          from pathlib import Path
          print(sorted(p.name for p in Path('/documents').iterdir()))
          print((Path('/documents') / '%s' / 'content.txt').read_text())
          """.formatted(doc), sf.options(), null));
      assertThat(out.stdout()).isEqualTo("['" + doc + "']\ntext of " + doc + "\n");
      await(s.close());
      sf.assertClean();
    } finally {
      sf.close();
    }
  }
  @Test
  @DisplayName("a gateway restarted while its sandboxes live: the new one removes them at start, the old cell ends typed")
  void restartWithSandboxesAlive() throws Exception {
    SessionFixture sf = new SessionFixture(tmp, 1);
    Vertx restartedVertx = Vertx.vertx();
    SandboxService restarted = null;
    try {
      await(sf.service.warm(sf.fx.tenantA));
      SandboxSession running = await(sf.service.open(sf.fx.tenantA, Scope.ALL, SessionFixture.Scripted.simple()));
      Future<CellOutcome> cell = running.execute("n = 0\nwhile True:\n    n = n + 1", sf.options(), null);
      // Taking one started its replacement: wait until it is in the pool too.
      await(sf.service.warm(sf.fx.tenantA));
      assertThat(sf.fx.containers()).as("the running and the pooled sandbox").hasSize(2);
      // The same gateway id starting afresh knows none of them: its start-up reap removes them all.
      restarted = new SandboxService(restartedVertx, sf.service.settings(),
          TenantTrees.fixed(restartedVertx, sf.fx.documentsRoot));
      await(restarted.start());
      assertThat(sf.fx.containers()).as("containers after the restart's reap").isEmpty();
      CellOutcome outcome = await(cell);
      assertThat(outcome.status()).isEqualTo(CellOutcome.Status.KILLED);
      assertThat(outcome.error().type()).isEqualTo(CellError.SANDBOX_CRASHED);
      await(sf.service.close());
      assertThat(sf.fx.runDirs()).as("run directories").isEmpty();
    } finally {
      if (restarted != null) {
        await(restarted.close());
      }
      await(restartedVertx.close());
      sf.close();
    }
  }
}
