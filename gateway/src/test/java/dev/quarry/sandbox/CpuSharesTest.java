package dev.quarry.sandbox;

import static dev.quarry.sandbox.SessionFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quarry.config.InvalidSetting;
import dev.quarry.support.Await;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The engine's CPUs shared between tenants (issue 33, class 5), on the real engine with the real
 * runner: admission keeps the sandboxes' CPU limits within the engine's CPUs times the overcommit
 * and a tenant within its share of them; start-up refuses a CPU limit the engine cannot give; and
 * under contention the kernel's own accounting shows CPU shared between tenants, not containers.
 */
@DisplayName("The engine's CPUs, shared between tenants")
class CpuSharesTest {
  @TempDir Path tmp;

  private record Gateway(SandboxFixture fx, Vertx vertx, SandboxService service) implements AutoCloseable {
    @Override
    public void close() throws Exception {
      try {
        await(service.close());
        await(vertx.close());
      } finally {
        fx.close();
      }
    }
  }

  private Gateway gateway(SandboxLimits limits, int maxActive, int sharePercent, SandboxSettings.Cpu cpu)
      throws Exception {
    SandboxFixture fx = new SandboxFixture(tmp);
    Vertx vertx = Vertx.vertx();
    SandboxSettings settings = new SandboxSettings(SandboxSettings.DEFAULT_DOCKER_HOST, RunnerImage.ensure(), List.of(),
        "", fx.gatewayId, fx.runRoot, limits, SandboxLimits.MAXIMUMS, 0, Duration.ofMinutes(10), false, maxActive,
        Duration.ofSeconds(60), SandboxSettings.Fairness.DEFAULTS.withTenantSharePercent(sharePercent),
        MountPrivacy.Policy.WARN, ImagePull.ANONYMOUS, cpu);
    return new Gateway(fx, vertx, new SandboxService(vertx, settings, TenantTrees.fixed(vertx, fx.documentsRoot)));
  }

  @Test
  @DisplayName("admission: at 1 engine CPU and an overcommit of 2, two sandboxes of 1 CPU at most, one a tenant; their limits add up to 2 CPUs")
  void admission() throws Exception {
    try (Gateway g = gateway(SandboxLimits.DEFAULTS, 16, 50, new SandboxSettings.Cpu(2, 1, "quarry"))) {
      await(g.service().start());
      assertThat(g.service().capacity().limit()).as("sandboxes the engine's CPUs carry").isEqualTo(2);
      SandboxSession a = await(g.service().open(g.fx().tenantA, Scope.ALL, SessionFixture.Scripted.simple()));
      assertThatThrownBy(() -> await(g.service().open(g.fx().tenantA, Scope.ALL, SessionFixture.Scripted.simple())))
          .isInstanceOf(ExecutionException.class).cause().isInstanceOf(SandboxQuotaExceeded.class)
          .hasMessageContaining("quota concurrent_sandboxes exceeded (limit 1)");
      SandboxSession b = await(g.service().open(g.fx().tenantB, Scope.ALL, SessionFixture.Scripted.simple()));
      try {
        long nanoCpus = 0;
        for (var c : g.fx().containers()) {
          var host = g.fx().docker.inspectContainerCmd(c.getId()).exec().getHostConfig();
          nanoCpus += host.getNanoCPUs();
          UUID tenant = UUID.fromString(c.getLabels().get(ContainerLauncher.LABEL_TENANT));
          assertThat(host.getCgroupParent()).as("the container's group").isEqualTo("/quarry/" + tenant);
        }
        assertThat(nanoCpus).as("the CPU limits of the gateway's containers").isEqualTo(2_000_000_000L);
      } finally {
        await(a.close());
        await(b.close());
      }
    }
  }

  @Test
  @DisplayName("start-up refuses a sandbox CPU limit the engine cannot give, and an overcommit that leaves room for none, naming the setting")
  void refusedAtStart() throws Exception {
    SandboxLimits twoCpus = new SandboxLimits(256L << 20, 2_000_000_000L, 64, 256, 16L << 20, Duration.ofSeconds(30),
        50_000);
    try (Gateway g = gateway(twoCpus, 16, 50, new SandboxSettings.Cpu(4, 1, "quarry"))) {
      assertThatThrownBy(() -> await(g.service().start())).cause().isInstanceOf(InvalidSetting.class)
          .hasMessageContaining("QUARRY_SANDBOX_MILLI_CPUS=2000").hasMessageContaining("1.0 CPUs");
    }
    try (Gateway g = gateway(SandboxLimits.DEFAULTS, 16, 50, new SandboxSettings.Cpu(0.5, 1, "quarry"))) {
      assertThatThrownBy(() -> await(g.service().start())).cause().isInstanceOf(InvalidSetting.class)
          .hasMessageContaining("QUARRY_SANDBOX_CPU_OVERCOMMIT=0.5");
    }
  }

  /** The CPU time the kernel has charged to the tenant's group, in nanoseconds (cgroup v1 or v2). */
  private static long usage(TenantCgroups cgroups, UUID tenant) {
    for (Path group : cgroups.groupsOf(tenant)) {
      try {
        if (Files.exists(group.resolve("cpuacct.usage"))) {
          return Long.parseLong(Files.readString(group.resolve("cpuacct.usage")).strip());
        }
        if (Files.exists(group.resolve("cpu.stat")) && group.getParent().getParent().equals(TenantCgroups.CGROUP_ROOT)) {
          for (String line : Files.readAllLines(group.resolve("cpu.stat"))) {
            if (line.startsWith("usage_usec ")) {
              return Long.parseLong(line.substring(11).strip()) * 1000;
            }
          }
        }
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
    throw new AssertionError("no CPU accounting for tenant " + tenant + " in " + cgroups.groupsOf(tenant));
  }

  @Test
  @DisplayName("under contention the kernel shares the CPU between tenants: one tenant's 6 busy sandboxes and another's 1 are charged about the same CPU time; the groups go with the last sandbox")
  void fairUnderContention() throws Exception {
    try (Gateway g = gateway(SandboxLimits.DEFAULTS, 16, 100, SandboxSettings.Cpu.UNBOUNDED)) {
      await(g.service().start());
      TenantCgroups cgroups = g.service().cgroups();
      UUID noisy = g.fx().tenantA;
      UUID quiet = g.fx().tenantB;
      List<SandboxSession> sessions = new ArrayList<>();
      List<Future<CellOutcome>> cells = new ArrayList<>();
      CellOptions spin = new CellOptions(110_000, 1000, List.of());
      try {
        for (int i = 0; i < 7; i++) {
          SandboxSession s = await(g.service().open(i < 6 ? noisy : quiet, Scope.ALL, SessionFixture.Scripted.simple()));
          sessions.add(s);
          cells.add(s.execute("n = 0\nwhile True:\n    n = n + 1", spin, null));
        }
        // Every cell spinning: then the kernel's count over the same span.
        Await.until(() -> !cgroups.groupsOf(noisy).isEmpty() && !cgroups.groupsOf(quiet).isEmpty(),
            Duration.ofSeconds(30), "both tenants' groups");
        long noisyStart = usage(cgroups, noisy);
        long quietStart = usage(cgroups, quiet);
        Await.until(() -> usage(cgroups, quiet) - quietStart >= 2_000_000_000L, Duration.ofSeconds(120),
            "two seconds of CPU for the quiet tenant's one sandbox");
        long noisyUsed = usage(cgroups, noisy) - noisyStart;
        long quietUsed = usage(cgroups, quiet) - quietStart;
        double ratio = quietUsed / (double) noisyUsed;
        System.out.printf("CPU charged over the same span: noisy tenant (6 sandboxes) %d ms, quiet tenant (1) %d ms,"
            + " ratio %.2f%n", noisyUsed / 1_000_000, quietUsed / 1_000_000, ratio);
        // Shared between containers, the quiet one would get a seventh of the contended CPU (about 1/6 of
        // the noisy tenant's); between tenants it gets its CPU's share against a half of the other group.
        assertThat(ratio).as("the quiet tenant's CPU time over the noisy tenant's").isGreaterThan(0.35);
        assertThat(cells).noneMatch(Future::isComplete);
      } finally {
        for (SandboxSession s : sessions) {
          await(s.close());
        }
      }
      assertThat(cgroups.containersOf(quiet)).isZero();
      assertThat(cgroups.groupsOf(quiet)).as("the quiet tenant's groups, once its last sandbox is gone").isEmpty();
      assertThat(cgroups.groupsOf(noisy)).as("the noisy tenant's groups").isEmpty();
    }
  }
}
