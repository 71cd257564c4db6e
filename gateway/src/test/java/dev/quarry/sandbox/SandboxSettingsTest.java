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
}
