package dev.quarry.gateway;

import dev.quarry.config.Settings;
import java.time.Duration;
import java.util.Map;

/**
 * Settings of the gateway's own operation, read from the same configuration map as every other
 * ({@link GatewaySettings}).
 *
 * @param drainGrace how long running analyses get to finish after SIGTERM before they are
 *                   cancelled; Kubernetes' terminationGracePeriodSeconds must exceed it
 * @param dockerHost the engine that readiness pings: the sandboxes' own {@code DOCKER_HOST}, read once
 *                   by their settings and handed over here
 */
public record OpsSettings(Duration drainGrace, String dockerHost) {
  public static final OpsSettings DEFAULTS =
      read(new Settings(Map.of()), dev.quarry.sandbox.SandboxSettings.DEFAULT_DOCKER_HOST);

  static OpsSettings read(Settings s, String dockerHost) {
    return new OpsSettings(s.seconds("QUARRY_DRAIN_GRACE_SECONDS", 120, 0, 3600), dockerHost);
  }
}
