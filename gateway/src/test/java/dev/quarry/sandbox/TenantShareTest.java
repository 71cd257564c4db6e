package dev.quarry.sandbox;

import static dev.quarry.sandbox.SessionFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayName("One tenant never takes the last sandboxes from the others")
class TenantShareTest {
  @TempDir Path tmp;

  @Test
  @DisplayName("a tenant at its share of the gateway is refused at once, naming the quota, and the other tenant still gets its sandboxes")
  void shareIsEnforced() throws Exception {
    try (SessionFixture sf = new SessionFixture(tmp, HostileRunner.ensure(), 4, Duration.ofSeconds(30),
        SandboxSettings.Fairness.DEFAULTS)) {
      SandboxSession a1 = await(sf.service.open(sf.fx.tenantA, Scope.ALL, SessionFixture.Scripted.simple()));
      SandboxSession a2 = await(sf.service.open(sf.fx.tenantA, Scope.ALL, SessionFixture.Scripted.simple()));
      assertThat(sf.service.heldBy(sf.fx.tenantA)).isEqualTo(2);
      long before = System.nanoTime();
      assertThatThrownBy(() -> await(sf.service.open(sf.fx.tenantA, Scope.ALL, SessionFixture.Scripted.simple())))
          .isInstanceOf(ExecutionException.class).cause().isInstanceOf(SandboxQuotaExceeded.class)
          .hasMessageContaining("quota concurrent_sandboxes exceeded (limit 2)")
          .hasMessageContaining("QUARRY_SANDBOX_TENANT_SHARE_PERCENT");
      assertThat(Duration.ofNanos(System.nanoTime() - before)).as("refused without waiting for a slot")
          .isLessThan(Duration.ofSeconds(10));
      assertThat(sf.service.heldBy(sf.fx.tenantA)).as("the refusal holds nothing").isEqualTo(2);

      SandboxSession b1 = await(sf.service.open(sf.fx.tenantB, Scope.ALL, SessionFixture.Scripted.simple()));
      SandboxSession b2 = await(sf.service.open(sf.fx.tenantB, Scope.ALL, SessionFixture.Scripted.simple()));
      CellOutcome quiet = await(b2.execute("#search ferry", new CellOptions(30_000, 1000, java.util.List.of()),
          CellListener.NONE));
      assertThat(quiet.stdout()).isEqualTo("hits=2\n");

      // A sandbox given back (removed) is the tenant's to take again.
      await(a1.close());
      assertThat(sf.service.heldBy(sf.fx.tenantA)).isEqualTo(1);
      SandboxSession a3 = await(sf.service.open(sf.fx.tenantA, Scope.ALL, SessionFixture.Scripted.simple()));
      for (SandboxSession s : new SandboxSession[] {a2, a3, b1, b2}) {
        await(s.close());
      }
      assertThat(sf.service.heldBy(sf.fx.tenantA)).isZero();
      assertThat(sf.service.heldBy(sf.fx.tenantB)).isZero();
      sf.assertClean();
    }
  }

  @Test
  @DisplayName("the tenant's own concurrent_sandboxes quota applies when it is below the share")
  void quotaBelowShare() throws Exception {
    try (SessionFixture sf = new SessionFixture(tmp, HostileRunner.ensure(), 8, Duration.ofSeconds(30),
        SandboxSettings.Fairness.DEFAULTS, tenant -> Future.succeededFuture(1))) {
      SandboxSession a = await(sf.service.open(sf.fx.tenantA, Scope.ALL, SessionFixture.Scripted.simple()));
      assertThatThrownBy(() -> await(sf.service.open(sf.fx.tenantA, Scope.ALL, SessionFixture.Scripted.simple())))
          .cause().isInstanceOf(SandboxQuotaExceeded.class)
          .hasMessageContaining("quota concurrent_sandboxes exceeded (limit 1)")
          .hasMessageContaining("its concurrent_sandboxes quota is 1");
      await(a.close());
      sf.assertClean();
    }
  }

  @Test
  @DisplayName("a slot that comes free goes to the waiting tenant that holds the fewest, not to the first in line")
  void freedSlotGoesToTheSmallerTenant() throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      UUID big = UUID.randomUUID();
      UUID small = UUID.randomUUID();
      Map<UUID, Integer> held = new HashMap<>(Map.of(big, 3, small, 1));
      SandboxCapacity capacity = new SandboxCapacity(vertx, 2, Duration.ofSeconds(30), () -> {},
          tenant -> held.getOrDefault(tenant, 0));
      SandboxCapacity.Slot first = await(capacity.acquire(big, null));
      SandboxCapacity.Slot second = await(capacity.acquire(big, null));
      Future<SandboxCapacity.Slot> bigWaits = capacity.acquire(big, null);
      Future<SandboxCapacity.Slot> smallWaits = capacity.acquire(small, null);
      assertThat(capacity.waiting()).isEqualTo(2);

      first.release();
      SandboxCapacity.Slot toSmall = await(smallWaits);
      assertThat(bigWaits.isComplete()).as("the big tenant, first in line, still waits").isFalse();
      second.release();
      SandboxCapacity.Slot toBig = await(bigWaits);
      toSmall.release();
      toBig.release();
      assertThat(capacity.used()).isZero();
    } finally {
      await(vertx.close());
    }
  }
}
