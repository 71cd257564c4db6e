package dev.quarry.sandbox;

import static dev.quarry.sandbox.SessionFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayName("The sandbox capacity of a gateway (QUARRY_SANDBOX_MAX_ACTIVE, QUARRY_SANDBOX_WAIT_MS)")
class SandboxCapacityTest {
  /** Far longer than any wait below should last: the tests that wait end on a real release. */
  private static final Duration LONG_WAIT = Duration.ofMinutes(2);

  @TempDir Path tmp;

  private static SandboxSession open(SessionFixture sf) throws Exception {
    return await(sf.service.open(sf.fx.tenantA, Scope.ALL, SessionFixture.Scripted.simple()));
  }

  @Test
  @DisplayName("a request over the limit waits, starts nothing, and proceeds once a sandbox is removed")
  void waitsForASlot() throws Exception {
    SessionFixture sf = new SessionFixture(tmp, 0, SandboxLimits.DEFAULTS, 2, LONG_WAIT);
    try {
      SandboxSession first = open(sf);
      SandboxSession second = open(sf);
      Future<SandboxSession> third = sf.service.open(sf.fx.tenantB, Scope.ALL, SessionFixture.Scripted.simple());
      assertThat(sf.service.capacity().waiting()).isEqualTo(1);
      assertThat(sf.service.capacity().used()).isEqualTo(2);
      assertThat(third.isComplete()).isFalse();
      assertThat(sf.fx.containers()).hasSize(2);
      assertThat(sf.metrics.scrape()).contains("quarry_sandbox_waiting_requests 1.0")
          .contains("quarry_sandbox_limit_sandboxes 2.0").contains("quarry_sandbox_live_sandboxes 2.0");

      await(first.close());
      SandboxSession got = await(third);
      assertThat(got.tenantId()).isEqualTo(sf.fx.tenantB);
      assertThat(await(got.execute("6 * 7", sf.options(), null)).stdout()).isEqualTo("42");
      assertThat(sf.service.capacity().waiting()).isZero();
      assertThat(sf.service.capacity().used()).isEqualTo(2);

      await(second.close());
      await(got.close());
      assertThat(sf.service.capacity().used()).isZero();
      assertThat(sf.metrics.scrape()).contains("quarry_sandbox_start_failures_total{reason=\"exhausted\"} 0.0");
      sf.assertClean();
    } finally {
      sf.close();
    }
  }

  @Test
  @DisplayName("a request abandoned while it waits leaves the queue at once, starts nothing, and the slot"
      + " it waited for goes to the next request")
  void abandonedWhileWaiting() throws Exception {
    SessionFixture sf = new SessionFixture(tmp, 0, SandboxLimits.DEFAULTS, 1, LONG_WAIT);
    try {
      SandboxSession first = open(sf);
      Promise<Void> giveUp = Promise.promise();
      Future<SandboxSession> abandoned = sf.service.open(sf.fx.tenantB, Scope.ALL,
          SessionFixture.Scripted.simple(), giveUp.future());
      Future<SandboxSession> next = sf.service.open(sf.fx.tenantB, Scope.ALL, SessionFixture.Scripted.simple());
      assertThat(sf.service.capacity().waiting()).isEqualTo(2);

      giveUp.complete();
      // Failed at once, while the only slot is still held: it did not wait for a release.
      assertThatThrownBy(() -> await(abandoned)).isInstanceOf(CancellationException.class);
      assertThat(abandoned.cause()).isInstanceOf(CancellationException.class)
          .hasMessageContaining("abandoned while it waited");
      assertThat(sf.service.capacity().waiting()).isEqualTo(1);
      assertThat(sf.service.capacity().used()).isEqualTo(1);
      assertThat(sf.fx.containers()).hasSize(1);

      await(first.close());
      SandboxSession got = await(next);
      assertThat(await(got.execute("6 * 7", sf.options(), null)).stdout()).isEqualTo("42");
      await(got.close());
      assertThat(sf.service.capacity().used()).isZero();
      assertThat(sf.metrics.scrape()).as("giving up is not a start failure")
          .contains("quarry_sandbox_start_failures_total{reason=\"launch\"} 0.0")
          .contains("quarry_sandbox_start_failures_total{reason=\"exhausted\"} 0.0");
      sf.assertClean();
    } finally {
      sf.close();
    }
  }

  @Test
  @DisplayName("a request that waits out QUARRY_SANDBOX_WAIT_MS fails typed and is counted as exhausted")
  void waitRunsOut() throws Exception {
    SessionFixture sf = new SessionFixture(tmp, 0, SandboxLimits.DEFAULTS, 1, Duration.ofMillis(300));
    try {
      SandboxSession held = open(sf);
      assertThatThrownBy(() -> open(sf)).isInstanceOf(ExecutionException.class)
          .cause().isInstanceOf(SandboxCapacityExhausted.class)
          .hasMessageContaining("QUARRY_SANDBOX_MAX_ACTIVE").hasMessageContaining("300 ms");
      assertThat(sf.service.capacity().waiting()).isZero();
      assertThat(sf.fx.containers()).hasSize(1);
      assertThat(sf.metrics.scrape()).contains("quarry_sandbox_start_failures_total{reason=\"exhausted\"} 1.0");

      await(held.close());
      // The refusal held nothing: the next request gets the slot at once.
      SandboxSession next = open(sf);
      await(next.close());
      assertThat(sf.service.capacity().used()).isZero();
      sf.assertClean();
    } finally {
      sf.close();
    }
  }

  @Test
  @DisplayName("warm sandboxes count against the limit, warm only into spare room, and give way to a waiting request")
  void warmPoolYields() throws Exception {
    SessionFixture sf = new SessionFixture(tmp, 2, SandboxLimits.DEFAULTS, 2, LONG_WAIT);
    try {
      await(sf.service.warm(sf.fx.tenantA));
      assertThat(sf.service.capacity().used()).isEqualTo(2);
      // Tenant B finds no room: an idle warm sandbox of A is removed for it.
      SandboxSession b = await(sf.service.open(sf.fx.tenantB, Scope.ALL, SessionFixture.Scripted.simple()));
      assertThat(b.tenantId()).isEqualTo(sf.fx.tenantB);
      assertThat(sf.service.capacity().used()).isEqualTo(2);
      assertThat(sf.fx.containers()).hasSize(2);
      // A takes its last warm one; the pool cannot refill without spare room, so never exceeds the limit.
      SandboxSession a = open(sf);
      assertThat(sf.service.capacity().used()).isEqualTo(2);
      assertThat(sf.fx.containers()).hasSize(2);
      await(a.close());
      await(b.close());
      assertThat(sf.metrics.scrape()).contains("quarry_sandbox_start_failures_total{reason=\"exhausted\"} 0.0");
      await(sf.service.close());
      assertThat(sf.service.capacity().used()).isZero();
      sf.assertClean();
    } finally {
      sf.close();
    }
  }

  @Test
  @DisplayName("every slot comes back after a timeout kill, an OOM, a crash, a cancel and a failed launch")
  void releasedAfterFailures() throws Exception {
    SessionFixture sf = new SessionFixture(tmp, 0, SandboxLimits.DEFAULTS, 2, LONG_WAIT);
    try {
      SandboxSession timedOut = open(sf);
      CellOutcome out = await(timedOut.execute(SandboxSessionTest.UNINTERRUPTIBLE, wall(sf, 300), null));
      assertThat(out.status()).isEqualTo(CellOutcome.Status.TIMEOUT);
      await(timedOut.close());
      assertThat(sf.service.capacity().used()).isZero();

      SandboxSession bomb = open(sf);
      CellOutcome oom = await(bomb.execute("x = 'a' * (2 * 10 ** 9)\nlen(x)", sf.options(), null));
      assertThat(oom.error().type()).isIn("OutOfMemory", "MemoryError");
      await(bomb.close());
      assertThat(sf.service.capacity().used()).isZero();

      SandboxSession crashed = open(sf);
      Promise<Void> running = Promise.promise();
      Future<CellOutcome> cell = crashed.execute("await list_documents()\n" + SandboxSessionTest.UNINTERRUPTIBLE,
          wall(sf, 60_000), signal(running));
      await(running.future());
      sf.fx.docker.killContainerCmd(containerOf(sf, crashed)).exec();
      assertThat(await(cell).error().type()).isEqualTo("SandboxCrashed");
      await(crashed.close());
      assertThat(sf.service.capacity().used()).isZero();

      SandboxSession cancelled = open(sf);
      Promise<Void> started = Promise.promise();
      Future<CellOutcome> ignoring = cancelled.execute("await list_documents()\n" + SandboxSessionTest.UNINTERRUPTIBLE,
          wall(sf, 60_000), signal(started));
      await(started.future());
      cancelled.cancel();
      assertThat(await(ignoring).status()).isEqualTo(CellOutcome.Status.CANCELLED);
      await(cancelled.close());
      assertThat(sf.service.capacity().used()).isZero();
      assertThat(sf.service.active()).isZero();
      sf.assertClean();
    } finally {
      sf.close();
    }

    // A launch that fails (the image is missing) gives its slot back too.
    SandboxFixture fx = new SandboxFixture(tmp.resolve("missing"));
    io.vertx.core.Vertx vertx = io.vertx.core.Vertx.vertx();
    SandboxService missing = new SandboxService(vertx, new SandboxSettings(SandboxSettings.DEFAULT_DOCKER_HOST,
        "quarry-no-such-image:none", List.of(), "", fx.gatewayId, fx.runRoot, SandboxLimits.DEFAULTS,
        SandboxLimits.MAXIMUMS, 0, Duration.ofMinutes(10), false, 1, Duration.ofMillis(100)),
        TenantTrees.fixed(vertx, fx.documentsRoot));
    try {
      for (int i = 0; i < 2; i++) {
        assertThatThrownBy(() -> await(missing.open(fx.tenantA, Scope.ALL, SessionFixture.Scripted.simple())))
            .cause().isInstanceOf(ContainerException.class);
        assertThat(missing.capacity().used()).isZero();
      }
    } finally {
      await(missing.close());
      await(vertx.close());
      fx.close();
    }
  }

  @Test
  @DisplayName("shutdown fails the waiting requests and removes every sandbox, leaving every slot free")
  void shutdownWithWaiters() throws Exception {
    SessionFixture sf = new SessionFixture(tmp, 0, SandboxLimits.DEFAULTS, 1, LONG_WAIT);
    try {
      SandboxSession held = open(sf);
      Future<SandboxSession> waiting = sf.service.open(sf.fx.tenantA, Scope.ALL, SessionFixture.Scripted.simple());
      assertThat(sf.service.capacity().waiting()).isEqualTo(1);
      await(sf.service.close());
      assertThatThrownBy(() -> await(waiting)).cause().isInstanceOf(IllegalStateException.class);
      assertThatThrownBy(() -> await(held.execute("1", sf.options(), null))).cause()
          .isInstanceOf(IllegalStateException.class);
      assertThat(sf.service.capacity().used()).isZero();
      assertThat(sf.service.capacity().waiting()).isZero();
      sf.assertClean();
    } finally {
      sf.close();
    }
  }

  @Test
  @DisplayName("the settings have their documented defaults, and a bad value is refused naming the setting and its bounds")
  void settings() {
    SandboxSettings defaults = SandboxSettings.fromEnv(Map.of());
    assertThat(defaults.maxActive()).isEqualTo(16);
    assertThat(defaults.maxWait()).isEqualTo(Duration.ofSeconds(10));
    SandboxSettings set = SandboxSettings.fromEnv(Map.of("QUARRY_SANDBOX_MAX_ACTIVE", "3", "QUARRY_SANDBOX_WAIT_MS", "0"));
    assertThat(set.maxActive()).isEqualTo(3);
    assertThat(set.maxWait()).isZero();
    assertThatThrownBy(() -> SandboxSettings.fromEnv(Map.of("QUARRY_SANDBOX_MAX_ACTIVE", "1025")))
        .hasMessage("QUARRY_SANDBOX_MAX_ACTIVE=1025 is out of bounds [1, 1024]");
    assertThatThrownBy(() -> SandboxSettings.fromEnv(Map.of("QUARRY_SANDBOX_MAX_ACTIVE", "many")))
        .hasMessage("QUARRY_SANDBOX_MAX_ACTIVE=many is not an integer");
    assertThatThrownBy(() -> SandboxSettings.fromEnv(Map.of("QUARRY_SANDBOX_WAIT_MS", "600001")))
        .hasMessage("QUARRY_SANDBOX_WAIT_MS=600001 is out of bounds [0, 600000]");
  }

  private static CellOptions wall(SessionFixture sf, long ms) {
    return new CellOptions(ms, sf.options().maxOutputChars(), List.of());
  }

  private static CellListener signal(Promise<Void> running) {
    return new CellListener() {
      @Override
      public void callback(CallbackType kind, CallbackArguments arguments) {
        running.tryComplete();
      }
    };
  }

  private static String containerOf(SessionFixture sf, SandboxSession s) {
    return sf.fx.docker.listContainersCmd()
        .withLabelFilter(Map.of(ContainerLauncher.LABEL_SANDBOX_ID, s.id())).exec().get(0).getId();
  }

  @Test
  @DisplayName("a limit lowered under the slots in use (the engine's CPUs carry fewer) hands a freed slot on only once below it, and is never raised")
  void loweredLimit() throws Exception {
    io.vertx.core.Vertx vertx = io.vertx.core.Vertx.vertx();
    try {
      SandboxCapacity capacity = new SandboxCapacity(vertx, 3, LONG_WAIT, () -> { });
      List<SandboxCapacity.Slot> slots = new java.util.ArrayList<>();
      for (int i = 0; i < 3; i++) {
        slots.add(await(capacity.acquire()));
      }
      capacity.lowerTo(1);
      capacity.lowerTo(5);
      assertThat(capacity.limit()).isEqualTo(1);
      assertThatThrownBy(() -> capacity.lowerTo(0)).isInstanceOf(IllegalArgumentException.class);
      Future<SandboxCapacity.Slot> waiting = capacity.acquire();
      slots.get(0).release();
      slots.get(1).release();
      assertThat(capacity.used()).isEqualTo(1);
      assertThat(waiting.isComplete()).as("served while the gateway was over its lowered limit").isFalse();
      slots.get(2).release();
      await(waiting).release();
      assertThat(capacity.used()).isZero();
      assertThat(capacity.tryAcquire()).isNotNull();
      assertThat(capacity.tryAcquire()).as("a second slot over the lowered limit").isNull();
    } finally {
      await(vertx.close());
    }
  }
}
