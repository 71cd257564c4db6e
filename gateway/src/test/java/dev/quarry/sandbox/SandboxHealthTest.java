package dev.quarry.sandbox;

import static dev.quarry.sandbox.SessionFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quarry.support.Await;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sandbox check of /readyz on a real engine with the image present (the pull has its own test,
 * SandboxImagePullTest): it holds only once a probe sandbox has started, fails saying why when one
 * cannot, and fails again when a request's sandbox fails to start in the engine.
 */
@DisplayName("The sandbox check: a probe sandbox proves sandboxes start, and a failed start takes the proof back")
class SandboxHealthTest {
  @TempDir Path tmp;

  @Test
  @DisplayName("a runner that never says Ready: not ready, naming what the container did, with the next attempt; nothing left behind")
  void probeThatFails() throws Exception {
    SandboxFixture.ensureBaseImage();
    SessionFixture sf = new SessionFixture(tmp, 0, SandboxLimits.DEFAULTS, SandboxFixture.IMAGE,
        List.of("sh", "-c", "sleep 1; exit 3"));
    try {
      await(sf.service.health().start());
      assertThatThrownBy(() -> await(sf.service.health().check())).isInstanceOf(ExecutionException.class)
          .hasMessageContaining("sandbox image " + SandboxFixture.IMAGE + " is in the Docker engine, but a probe sandbox"
              + " did not start: its runner did not become ready: its container stopped (exit status 3)")
          .hasMessageContaining("next attempt in");
      sf.assertClean();
    } finally {
      sf.close();
    }
  }

  @Test
  @DisplayName("ready once a probe sandbox started and was removed; a start that failed in the engine makes it unready until a new probe starts; a full gateway does not")
  void failedStartTakesTheProofBack() throws Exception {
    SessionFixture sf = new SessionFixture(tmp, 0);
    SandboxHealth health = sf.service.health();
    try {
      await(health.start());
      assertThat(await(health.check())).contains("a probe sandbox started in");
      sf.assertClean();

      // Not the engine's failure: a full gateway, a tenant's quota.
      health.sandboxFailed(new SandboxCapacityExhausted(16, 10_000, 1));
      health.sandboxFailed(new SandboxQuotaExceeded(1, 8, 16));
      assertThat(await(health.check())).contains("a probe sandbox started in");

      health.sandboxFailed(new ContainerException(ContainerException.Reason.ENGINE_ERROR,
          "start sandbox container 0123: no space left on device", null));
      assertThatThrownBy(() -> await(health.check())).isInstanceOf(ExecutionException.class)
          .hasMessageContaining("a sandbox failed to start: start sandbox container 0123: no space left on device");
      Await.until(() -> {
        try {
          return await(health.check()).contains("a probe sandbox started in");
        } catch (Exception e) {
          return false;
        }
      }, Duration.ofMinutes(1), "a new probe sandbox");
      Await.until(() -> sf.service.liveSandboxIds().isEmpty(), Duration.ofSeconds(30), "the probe sandbox removed");
      sf.assertClean();
    } finally {
      sf.close();
    }
  }
}
