package dev.quarry.sandbox;

import static dev.quarry.sandbox.SessionFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayName("A sandbox session")
class SandboxSessionTest {
  /** Runs in C without returning to the interpreter: the runner's own timer cannot stop it. */
  static final String UNINTERRUPTIBLE = "sum(range(10 ** 13))";

  @TempDir static Path tmp;
  static SessionFixture sf;

  @BeforeAll
  static void setUp() throws Exception {
    sf = new SessionFixture(tmp, 0);
  }

  @AfterAll
  static void tearDown() throws Exception {
    sf.close();
  }

  @AfterEach
  void nothingLeft() throws Exception {
    assertThat(sf.service.active()).isZero();
    sf.assertClean();
  }

  SandboxSession open() throws Exception {
    return await(sf.service.open(sf.fx.tenantA, Scope.ALL, SessionFixture.Scripted.simple()));
  }

  CellOptions wall(long ms) {
    return new CellOptions(ms, sf.options().maxOutputChars(), List.of());
  }

  @Test
  @DisplayName("runs a cell over gRPC: printed output, then the REPL value, streamed and in the result")
  void roundTrip() throws Exception {
    SandboxSession s = open();
    try {
      StringBuilder streamed = new StringBuilder();
      CellOutcome out = await(s.execute("print('hi')\n6 * 7", sf.options(), new CellListener() {
        @Override
        public void output(CellListener.Stream channel, String text) {
          synchronized (streamed) {
            streamed.append(text);
          }
        }
      }));
      assertThat(out.status()).isEqualTo(CellOutcome.Status.OK);
      assertThat(out.stdout()).isEqualTo("hi\n42");
      synchronized (streamed) {
        assertThat(streamed.toString()).isEqualTo("hi\n42");
      }
      assertThat(out.toToolResult().fieldNames())
          .containsExactly("success", "stdout", "stderr", "error", "truncated", "duration_ms");
      assertThat(out.toToolResult().getBoolean("success")).isTrue();
      assertThat(out.toToolResult().getValue("error")).isNull();
    } finally {
      await(s.close());
    }
  }

  @Test
  @DisplayName("serves each sandbox on a socket in its own run directory that only its user can open")
  void socketOwnership() throws Exception {
    SandboxSession s = open();
    try {
      Path socket = sf.fx.runRoot.resolve(sf.fx.gatewayId).resolve(s.id()).resolve(ContainerLauncher.SOCKET_NAME);
      assertThat(java.nio.file.Files.exists(socket)).isTrue();
      boolean root = (int) java.nio.file.Files.getAttribute(Path.of("/proc/self"), "unix:uid") == 0;
      if (root) {
        // The image's user is 10001: the socket is given to it, and nobody else may connect.
        assertThat(java.nio.file.Files.getAttribute(socket, "unix:uid")).isEqualTo(10001);
        assertThat(java.nio.file.Files.getPosixFilePermissions(socket))
            .isEqualTo(java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
      } else {
        assertThat(java.nio.file.Files.getPosixFilePermissions(socket))
            .isEqualTo(java.nio.file.attribute.PosixFilePermissions.fromString("rw-rw-rw-"));
      }
    } finally {
      await(s.close());
    }
  }

  @Test
  @DisplayName("keeps variables from cell to cell of one session, never into another session")
  void variablesPerSession() throws Exception {
    SandboxSession a = open();
    SandboxSession b = open();
    try {
      assertThat(await(a.execute("secret = 'kept'", sf.options(), null)).success()).isTrue();
      assertThat(await(a.execute("secret", sf.options(), null)).stdout()).isEqualTo("'kept'");
      CellOutcome other = await(b.execute("secret", sf.options(), null));
      assertThat(other.success()).isFalse();
      assertThat(other.error().type()).isEqualTo("NameError");
    } finally {
      await(a.close());
      await(b.close());
    }
  }

  @Test
  @DisplayName("answers callbacks through Callbacks and reports each to the listener")
  void callbacks() throws Exception {
    SandboxSession s = open();
    try {
      List<String> calls = new ArrayList<>();
      CellOutcome out = await(s.execute("""
          hits = await search('what', limit=3)
          docs = await list_documents()
          answer = await llm('hello')
          print(hits[-1]['query'], hits[-1]['limit'], docs[0]['title'], answer)
          """, sf.options(), new CellListener() {
            @Override
            public void callback(CallbackType kind, CallbackArguments arguments) {
              synchronized (calls) {
                calls.add(kind.name());
              }
            }
          }));
      assertThat(out.stdout()).isEqualTo("what 3 T echo: hello\n");
      synchronized (calls) {
        assertThat(calls).containsExactly("SEARCH", "LIST_DOCUMENTS",
            "LLM");
      }
      CellOutcome typed = await(s.execute("""
          try:
              await search('fail')
          except ValueError as e:
              print('ValueError', e)
          try:
              await search('boom')
          except RuntimeError as e:
              print('RuntimeError', e)
          """, sf.options(), null));
      assertThat(typed.stdout()).isEqualTo("ValueError no such query\nRuntimeError search failed inside the gateway\n");
      assertThat(typed.stdout()).doesNotContain("secret internal detail");
    } finally {
      await(s.close());
    }
  }

  @Test
  @DisplayName("reports a runtime error with its type, message and traceback")
  void runtimeError() throws Exception {
    SandboxSession s = open();
    try {
      CellOutcome out = await(s.execute("x = 1\ny = {}\ny['missing']", sf.options(), null));
      assertThat(out.status()).isEqualTo(CellOutcome.Status.ERROR);
      assertThat(out.error().type()).isEqualTo("KeyError");
      assertThat(out.error().message()).contains("missing");
      assertThat(out.error().traceback()).contains("line 3");
      assertThat(out.toToolResult().getJsonObject("error").fieldNames())
          .containsExactly("type", "message", "traceback");
    } finally {
      await(s.close());
    }
  }

  @Test
  @DisplayName("refuses a second cell while one runs")
  void oneCellAtATime() throws Exception {
    SandboxSession s = open();
    try {
      Future<CellOutcome> first = s.execute("sum(range(10 ** 6))", sf.options(), null);
      assertThatThrownBy(() -> await(s.execute("1", sf.options(), null)))
          .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(IllegalStateException.class);
      assertThat(await(first).success()).isTrue();
    } finally {
      await(s.close());
    }
  }

  @Test
  @DisplayName("times out a cell the runner stops itself, and the session goes on")
  void softTimeout() throws Exception {
    SandboxSession s = open();
    try {
      CellOutcome out = await(s.execute("while True:\n    pass", wall(500), null));
      assertThat(out.status()).isEqualTo(CellOutcome.Status.TIMEOUT);
      assertThat(out.error().type()).isEqualTo("Timeout");
      assertThat(await(s.execute("1 + 1", sf.options(), null)).stdout()).isEqualTo("2");
    } finally {
      await(s.close());
    }
  }

  @Test
  @DisplayName("kills a sandbox whose cell ignores its wall time: Timeout, then a clean close")
  void hardTimeout() throws Exception {
    SandboxSession s = open();
    CellOutcome out = await(s.execute(UNINTERRUPTIBLE, wall(300), null));
    assertThat(out.status()).isEqualTo(CellOutcome.Status.TIMEOUT);
    assertThat(out.error().type()).isEqualTo("Timeout");
    CellOutcome after = await(s.execute("1", sf.options(), null));
    assertThat(after.error().type()).isEqualTo("SandboxUnavailable");
    await(s.close());
    await(s.close()); // idempotent
  }

  @Test
  @DisplayName("reports a memory bomb as OutOfMemory (or the runner's MemoryError)")
  void memoryBomb() throws Exception {
    SandboxSession s = open();
    try {
      CellOutcome out = await(s.execute("x = 'a' * (2 * 10 ** 9)\nlen(x)", sf.options(), null));
      assertThat(out.success()).isFalse();
      assertThat(out.error().type()).isIn("OutOfMemory", "MemoryError");
    } finally {
      await(s.close());
    }
  }

  @Test
  @DisplayName("reports a container killed mid-cell as SandboxCrashed and carries on")
  void killedMidCell() throws Exception {
    SandboxSession s = open();
    try {
      Promise<Void> running = Promise.promise();
      Future<CellOutcome> cell = s.execute("await list_documents()\n" + UNINTERRUPTIBLE, wall(60_000),
          new CellListener() {
            @Override
            public void callback(CallbackType kind, CallbackArguments arguments) {
              running.tryComplete();
            }
          });
      await(running.future());
      sf.fx.docker.killContainerCmd(containerOf(s)).exec();
      CellOutcome out = await(cell);
      assertThat(out.status()).isEqualTo(CellOutcome.Status.KILLED);
      assertThat(out.error().type()).isEqualTo("SandboxCrashed");
      SandboxSession next = open();
      assertThat(await(next.execute("2 + 2", sf.options(), null)).stdout()).isEqualTo("4");
      await(next.close());
    } finally {
      await(s.close());
    }
  }

  @Test
  @DisplayName("cancels a running cell; one that ignores the cancel has its sandbox killed")
  void cancel() throws Exception {
    SandboxSession s = open();
    try {
      Promise<Void> running = Promise.promise();
      CellListener signal = new CellListener() {
        @Override
        public void callback(CallbackType kind, CallbackArguments arguments) {
          running.tryComplete();
        }
      };
      Future<CellOutcome> cell = s.execute("await list_documents()\nwhile True:\n    pass", wall(60_000), signal);
      await(running.future());
      s.cancel();
      CellOutcome out = await(cell);
      assertThat(out.status()).isEqualTo(CellOutcome.Status.CANCELLED);
      assertThat(out.error().type()).isEqualTo("Cancelled");
      assertThat(await(s.execute("3", sf.options(), null)).stdout()).isEqualTo("3");
    } finally {
      await(s.close());
    }
  }

  @Test
  @DisplayName("kills the sandbox of a cell that ignores a cancel: Cancelled, and nothing left")
  void cancelIgnored() throws Exception {
    SandboxSession s = open();
    Promise<Void> running = Promise.promise();
    Future<CellOutcome> cell = s.execute("await list_documents()\n" + UNINTERRUPTIBLE, wall(60_000),
        new CellListener() {
          @Override
          public void callback(CallbackType kind, CallbackArguments arguments) {
            running.tryComplete();
          }
        });
    await(running.future());
    s.cancel();
    CellOutcome out = await(cell);
    assertThat(out.status()).isEqualTo(CellOutcome.Status.CANCELLED);
    assertThat(out.error().type()).isEqualTo("Cancelled");
    await(s.close());
  }

  @Test
  @DisplayName("cuts output at max_output_chars and says so; refuses limits above the maximums")
  void outputLimit() throws Exception {
    SandboxSession s = open();
    try {
      CellOutcome out = await(s.execute("print('x' * 5000)", new CellOptions(10_000, 200, List.of()), null));
      assertThat(out.success()).isTrue();
      assertThat(out.truncated()).isTrue();
      assertThat(out.stdout().length()).isLessThan(1_000);
      assertThatThrownBy(() -> await(s.execute("1", new CellOptions(10_000, 10_000_000, List.of()), null)))
          .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("max_output_chars");
    } finally {
      await(s.close());
    }
  }

  private static String containerOf(SandboxSession s) {
    return sf.fx.docker.listContainersCmd()
        .withLabelFilter(java.util.Map.of(ContainerLauncher.LABEL_SANDBOX_ID, s.id())).exec().get(0).getId();
  }
}
