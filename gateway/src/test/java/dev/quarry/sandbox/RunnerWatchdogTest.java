package dev.quarry.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.proto.sandbox.v1.CallbackReply;
import dev.quarry.proto.sandbox.v1.CellLimits;
import dev.quarry.proto.sandbox.v1.ExecuteRequest;
import dev.quarry.proto.sandbox.v1.GatewayMessage;
import dev.quarry.proto.sandbox.v1.SandboxMessage;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * R5-5: a gateway that dies cannot remove its sandboxes, so the real runner must not outlive its
 * stream, whatever its cell does. Here the gateway's end is only the endpoint (no session): it
 * closes without killing or removing the container, as a gateway killed with SIGKILL would.
 * (A cell stuck in C code that holds the GIL is ended by faulthandler's watchdog instead: see the
 * runner's own test_protocol.HardExitBackstop; no cell within the language holds it long enough.)
 */
@DisplayName("The runner ends when its gateway goes")
class RunnerWatchdogTest {
  @TempDir static Path tmp;
  static SandboxFixture fx;
  static Vertx vertx;
  static ContainerLauncher launcher;

  @BeforeAll
  static void setUp() throws Exception {
    fx = new SandboxFixture(tmp);
    vertx = Vertx.vertx();
    SandboxSettings s = fx.settings();
    launcher = new ContainerLauncher(fx.docker, new SandboxSettings(s.dockerHost(), RunnerImage.ensure(), List.of(),
        s.user(), s.gatewayId(), s.runRoot(), s.limits(), s.maxLimits(), 0, s.reapInterval(), false));
  }

  @AfterAll
  static void tearDown() throws Exception {
    await(vertx.close());
    fx.close();
  }

  static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  /**
   * Starts a real runner, runs {@code code} (which first awaits list_documents(), answered here, so
   * that the cell is surely running), then drops the gateway's end. Returns the container's exit
   * code; fails when it is still running after {@code within}.
   */
  static long exitAfterGatewayGoes(String code, long wallTimeMs, Duration within) throws Exception {
    SandboxEndpoint endpoint = new SandboxEndpoint(vertx);
    Sandbox sandbox = launcher.launch(fx.tenantA, launcher.settings().limits(), List.of(), runDir -> {
      endpoint.listen(runDir.resolve(ContainerLauncher.SOCKET_NAME), launcher.user())
          .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      return fx.documents(fx.tenantA);
    });
    try {
      await(endpoint.ready());
      Promise<String> called = Promise.promise();
      endpoint.onMessage(m -> {
        if (m.getKindCase() == SandboxMessage.KindCase.CALLBACK) {
          called.tryComplete(m.getCallback().getCallId());
        }
      });
      endpoint.send(GatewayMessage.newBuilder().setExecute(ExecuteRequest.newBuilder().setCellId("c1").setCode(code)
          .setLimits(CellLimits.newBuilder().setWallTimeMs(wallTimeMs).setMaxOutputChars(1000))).build());
      String callId = await(called.future());
      endpoint.send(GatewayMessage.newBuilder().setCallbackReply(CallbackReply.newBuilder().setCallId(callId)
          .setResultJson("[]")).build());
      await(endpoint.close());
      long started = System.nanoTime();
      long exitCode = launcher.awaitExit(sandbox, within);
      System.out.printf("runner exited %d ms after its stream ended (exit code %d)%n",
          (System.nanoTime() - started) / 1_000_000, exitCode);
      return exitCode;
    } finally {
      launcher.remove(sandbox);
    }
  }

  @Test
  @DisplayName("at once, under a cell that swallows its interrupts in a loop")
  void swallowingLoop() throws Exception {
    long code = exitAfterGatewayGoes("""
        await list_documents()
        while True:
            try:
                while True:
                    pass
            except:
                pass
        """, 60_000, Duration.ofSeconds(8));
    assertThat(code).isEqualTo(1);
  }
}
