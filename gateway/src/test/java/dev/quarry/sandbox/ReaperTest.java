package dev.quarry.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayName("The reaper")
class ReaperTest {
  @TempDir static Path tmp;
  static SandboxFixture fx;
  static Vertx vertx;

  @BeforeAll
  static void setUp() throws Exception {
    fx = new SandboxFixture(tmp);
    vertx = Vertx.vertx();
  }

  @AfterAll
  static void tearDown() throws Exception {
    await(vertx.close());
    fx.close();
  }

  static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  @Test
  @DisplayName("removes this gateway's leftovers and stray directories, but not live sandboxes or other gateways'")
  void reapsLeftovers() throws Exception {
    ContainerLauncher launcher = fx.launcher();
    // A launcher that forgot its sandboxes: what a crashed gateway with the same id leaves behind.
    ContainerLauncher crashed = fx.launcher();
    List<Sandbox> leftovers = List.of(
        crashed.launch(fx.tenantA, fx.documents(fx.tenantA)),
        crashed.launch(fx.tenantB, fx.documents(fx.tenantB)),
        crashed.launch(fx.tenantA, fx.documents(fx.tenantA)));
    crashed.kill(leftovers.get(2)); // an exited one counts too
    Path stray = Files.createDirectories(fx.runRoot.resolve(fx.gatewayId).resolve("0123456789ab"));
    Sandbox live = launcher.launch(fx.tenantA, fx.documents(fx.tenantA));
    SandboxSettings s = fx.settings();
    ContainerLauncher otherGateway = new ContainerLauncher(fx.docker, new SandboxSettings(s.dockerHost(),
        s.image(), s.command(), s.user(), fx.gatewayId + "-other", s.runRoot(), s.limits(), s.maxLimits(),
        0, s.reapInterval(), false));
    Sandbox other = otherGateway.launch(fx.tenantB, fx.documents(fx.tenantB));
    try {
      int removed = new Reaper(fx.docker, launcher).reapOnce(false);

      assertThat(removed).isEqualTo(3);
      for (Sandbox l : leftovers) {
        assertThat(fx.exists(l.containerId())).as("leftover %s", l.id()).isFalse();
        assertThat(l.runDir()).doesNotExist();
      }
      assertThat(stray).doesNotExist();
      assertThat(fx.exists(live.containerId())).isTrue();
      assertThat(live.runDir()).isDirectory();
      assertThat(fx.exists(other.containerId())).isTrue();
      assertThat(other.runDir()).isDirectory();
    } finally {
      launcher.remove(live);
      otherGateway.remove(other);
    }
    assertThat(fx.containers()).isEmpty();
    assertThat(fx.runDirs()).isEmpty();
  }

  @Test
  @DisplayName("runs at start-up and then periodically on Vert.x")
  void periodic() throws Exception {
    SandboxSettings s = fx.settings();
    ContainerLauncher launcher = new ContainerLauncher(fx.docker, new SandboxSettings(s.dockerHost(), s.image(),
        s.command(), s.user(), s.gatewayId(), s.runRoot(), s.limits(), s.maxLimits(), 0,
        Duration.ofMillis(200), false));
    Sandbox before = fx.launcher().launch(fx.tenantA, fx.documents(fx.tenantA));
    Reaper reaper = new Reaper(fx.docker, launcher);
    Sandbox live = null;
    try {
      assertThat(await(reaper.start(vertx))).as("removed at start-up").isEqualTo(1);
      assertThat(fx.exists(before.containerId())).isFalse();

      // Created behind the launcher's back while the reaper runs: like a create the engine
      // finished after the launcher had given up on it.
      String after = fx.docker.createContainerCmd(SandboxFixture.IMAGE).withCmd(SandboxFixture.IDLE)
          .withLabels(Map.of(ContainerLauncher.LABEL_SANDBOX, "1", ContainerLauncher.LABEL_GATEWAY,
              fx.gatewayId, ContainerLauncher.LABEL_SANDBOX_ID, "feedfacecafe"))
          .exec().getId();
      live = launcher.launch(fx.tenantB, fx.documents(fx.tenantB));
      // The pass that removes it may be one already under way; the next one to start surely has.
      await(reaper.nextPass());
      assertThat(fx.exists(after)).as("leftover created after start-up").isFalse();
      assertThat(fx.exists(live.containerId())).isTrue();
    } finally {
      reaper.stop();
      if (live != null) {
        launcher.remove(live);
      }
    }
    assertThat(fx.containers()).isEmpty();
    assertThat(fx.runDirs()).isEmpty();
  }
}
