package dev.quarry.sandbox;

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
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayName("The warm pool")
class WarmPoolTest {
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
    return f.toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
  }

  @Test
  @DisplayName("hands out distinct running containers, refills, never reuses, and cleans up on close")
  void takeRefillClose() throws Exception {
    ContainerLauncher launcher = fx.launcher();
    WarmPool pool = new WarmPool(vertx, launcher, fx::documents);
    await(pool.warm(fx.tenantA));
    assertThat(pool.ready(fx.tenantA)).isEqualTo(2);
    Set<String> pooled = launcher.liveIds();
    assertThat(pooled).hasSize(2);

    List<Sandbox> taken = new ArrayList<>();
    taken.add(await(pool.take(fx.tenantA)));
    taken.add(await(pool.take(fx.tenantA)));
    assertThat(taken).extracting(Sandbox::id).containsExactlyInAnyOrderElementsOf(pooled);
    taken.add(await(pool.take(fx.tenantA))); // pooled if the refill won the race, cold otherwise
    assertThat(taken).extracting(Sandbox::containerId).doesNotHaveDuplicates();
    for (Sandbox s : taken) {
      assertThat(launcher.state(s).running()).isTrue();
      assertThat(s.tenantId()).isEqualTo(fx.tenantA);
    }

    await(pool.warm(fx.tenantA));
    assertThat(pool.ready(fx.tenantA)).isEqualTo(2);
    Set<String> refilled = new HashSet<>(launcher.liveIds());
    taken.forEach(s -> refilled.remove(s.id()));
    assertThat(refilled).hasSize(2).doesNotContainAnyElementsOf(pooled);

    Sandbox other = await(pool.take(fx.tenantB));
    assertThat(fx.docker.inspectContainerCmd(other.containerId()).exec().getConfig().getLabels())
        .containsEntry("quarry.tenant", fx.tenantB.toString());
    taken.add(other);

    for (Sandbox s : taken) {
      await(pool.dispose(s));
      assertThat(fx.exists(s.containerId())).isFalse();
    }
    await(pool.close());
    assertThat(fx.containers()).isEmpty();
    assertThat(fx.runDirs()).isEmpty();
    assertThat(launcher.liveIds()).isEmpty();
    assertThatThrownBy(() -> await(pool.take(fx.tenantA)))
        .isInstanceOf(ExecutionException.class).hasMessageContaining("closed");
  }

  @Test
  @DisplayName("removes containers that were still starting when it closed")
  void closeWhileStarting() throws Exception {
    ContainerLauncher launcher = fx.launcher();
    WarmPool pool = new WarmPool(vertx, launcher, fx::documents);
    Future<Void> filling = pool.warm(fx.tenantB);
    await(pool.close());
    assertThat(filling.failed() || filling.succeeded()).isTrue();
    assertThat(fx.containers()).isEmpty();
    assertThat(fx.runDirs()).isEmpty();
    assertThat(launcher.liveIds()).isEmpty();
  }

  @Test
  @DisplayName("fails warm() with the launch error when the image is missing, leaving nothing")
  void launchFailure() throws Exception {
    SandboxSettings s = fx.settings();
    ContainerLauncher launcher = new ContainerLauncher(fx.docker, new SandboxSettings(s.dockerHost(),
        "quarry-no-such-image:none", s.command(), SandboxSettings.NOBODY, s.gatewayId(), s.runRoot(), s.limits(),
        s.maxLimits(), 2, s.reapInterval(), false));
    WarmPool pool = new WarmPool(vertx, launcher, fx::documents);
    assertThatThrownBy(() -> await(pool.warm(fx.tenantA)))
        .hasCauseInstanceOf(ContainerException.class).hasMessageContaining("quarry-no-such-image");
    await(pool.close());
    assertThat(fx.containers()).isEmpty();
    assertThat(fx.runDirs()).isEmpty();
  }
}
