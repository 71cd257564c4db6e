package dev.quarry.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("The sandbox settings' fairness limits and wall-time maximum")
class SandboxSettingsTest {

  @Test
  @DisplayName("by default an execution may ask two minutes of wall time, one tenant half the sandboxes, 200 callbacks")
  void defaults() {
    SandboxSettings s = SandboxSettings.fromEnv(Map.of());
    assertThat(s.maxLimits().cellWallTime()).isEqualTo(Duration.ofSeconds(120));
    assertThat(s.fairness()).isEqualTo(SandboxSettings.Fairness.DEFAULTS);
    assertThat(s.fairness().tenantShare(s.maxActive())).isEqualTo(8);
    assertThat(s.fairness().executionCallbacks()).isEqualTo(200);
    assertThat(SandboxSettings.Fairness.DEFAULTS.withTenantSharePercent(100).tenantShare(16)).isEqualTo(Integer.MAX_VALUE);
    assertThat(SandboxSettings.Fairness.DEFAULTS.withTenantSharePercent(1).tenantShare(16)).isEqualTo(1);
  }

  @Test
  @DisplayName("values from the environment are read, and one out of its bounds stops start-up naming the variable")
  void fromEnvironment() {
    SandboxSettings s = SandboxSettings.fromEnv(Map.of("QUARRY_SANDBOX_MAX_CELL_SECONDS", "600",
        "QUARRY_SANDBOX_TENANT_SHARE_PERCENT", "25", "QUARRY_SANDBOX_STALL_MS", "500",
        "QUARRY_EXECUTION_CALLBACKS", "5000", "QUARRY_MAX_EXECUTION_CALLBACKS", "9000"));
    assertThat(s.maxLimits().cellWallTime()).isEqualTo(Duration.ofMinutes(10));
    assertThat(s.fairness().tenantShare(16)).isEqualTo(4);
    assertThat(s.fairness().stallTimeout()).isEqualTo(Duration.ofMillis(500));
    assertThat(s.fairness().executionCallbacks()).isEqualTo(5000);

    assertThatThrownBy(() -> SandboxSettings.fromEnv(Map.of("QUARRY_SANDBOX_CELL_SECONDS", "300")))
        .hasMessageContaining("QUARRY_SANDBOX_CELL_SECONDS=300").hasMessageContaining("QUARRY_SANDBOX_MAX_CELL_SECONDS=120");
    assertThatThrownBy(() -> SandboxSettings.fromEnv(Map.of("QUARRY_SANDBOX_MAX_CELL_SECONDS", "601")))
        .hasMessageContaining("QUARRY_SANDBOX_MAX_CELL_SECONDS");
    assertThatThrownBy(() -> SandboxSettings.fromEnv(Map.of("QUARRY_SANDBOX_TENANT_SHARE_PERCENT", "0")))
        .hasMessageContaining("QUARRY_SANDBOX_TENANT_SHARE_PERCENT");
    assertThatThrownBy(() -> SandboxSettings.fromEnv(Map.of("QUARRY_EXECUTION_CALLBACKS", "3000")))
        .hasMessageContaining("QUARRY_EXECUTION_CALLBACKS");
  }

  @Test
  @DisplayName("CPU: limits may add up to 4 times the engine's CPUs, each tenant in a group under 'quarry'; bad values name the variable")
  void cpu() {
    SandboxSettings s = SandboxSettings.fromEnv(Map.of());
    assertThat(s.cpu()).isEqualTo(SandboxSettings.Cpu.DEFAULTS);
    assertThat(s.cpu().overcommit()).isEqualTo(4.0);
    assertThat(s.cpu().engineCpus()).isZero();
    assertThat(s.cpu().cgroupParent()).isEqualTo("quarry");
    // 2 CPUs × 4 carry 8 sandboxes of 1 CPU, 16 of half a CPU, 5 of 1.5.
    assertThat(s.cpu().sandboxes(2, 1_000_000_000L)).isEqualTo(8);
    assertThat(s.cpu().sandboxes(2, 500_000_000L)).isEqualTo(16);
    assertThat(s.cpu().sandboxes(2, 1_500_000_000L)).isEqualTo(5);
    assertThat(new SandboxSettings.Cpu(0.5, 0, "").sandboxes(1, 1_000_000_000L)).isZero();

    SandboxSettings set = SandboxSettings.fromEnv(Map.of("QUARRY_SANDBOX_CPU_OVERCOMMIT", "1.5",
        "QUARRY_SANDBOX_ENGINE_CPUS", "4", "QUARRY_SANDBOX_CGROUP_PARENT", ""));
    assertThat(set.cpu()).isEqualTo(new SandboxSettings.Cpu(1.5, 4, "quarry"));
    assertThat(SandboxSettings.fromEnv(Map.of("QUARRY_SANDBOX_CGROUP_PARENT", "tenants_2")).cpu().cgroupParent())
        .isEqualTo("tenants_2");
    assertThat(SandboxSettings.fromEnv(Map.of("QUARRY_SANDBOX_CGROUP_PARENT", "none")).cpu().cgroupParent()).isEmpty();

    assertThatThrownBy(() -> SandboxSettings.fromEnv(Map.of("QUARRY_SANDBOX_CPU_OVERCOMMIT", "0")))
        .hasMessageContaining("QUARRY_SANDBOX_CPU_OVERCOMMIT");
    assertThatThrownBy(() -> SandboxSettings.fromEnv(Map.of("QUARRY_SANDBOX_ENGINE_CPUS", "lots")))
        .hasMessageContaining("QUARRY_SANDBOX_ENGINE_CPUS=lots");
    assertThatThrownBy(() -> SandboxSettings.fromEnv(Map.of("QUARRY_SANDBOX_ENGINE_CPUS", "-1")))
        .hasMessageContaining("QUARRY_SANDBOX_ENGINE_CPUS=-1");
    assertThatThrownBy(() -> SandboxSettings.fromEnv(Map.of("QUARRY_SANDBOX_ENGINE_CPUS", "5000")))
        .hasMessageContaining("QUARRY_SANDBOX_ENGINE_CPUS=5000");
    assertThatThrownBy(() -> SandboxSettings.fromEnv(Map.of("QUARRY_SANDBOX_CGROUP_PARENT", "a-b")))
        .hasMessageContaining("QUARRY_SANDBOX_CGROUP_PARENT='a-b'");
    assertThatThrownBy(() -> SandboxSettings.fromEnv(Map.of("QUARRY_SANDBOX_CGROUP_PARENT", "../x")))
        .hasMessageContaining("QUARRY_SANDBOX_CGROUP_PARENT");
  }
}
