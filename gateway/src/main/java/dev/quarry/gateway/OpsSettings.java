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
 * @param metricsPort where {@code GET /metrics} is served, apart from the API's port so that the
 *                   network can keep it to the monitoring system (0: any free port)
 * @param replicaLease how long this replica counts among those sharing the database without renewing
 *                   its lease (renewed every third of it): the places of a replica that died are free
 *                   after it
 */
public record OpsSettings(Duration drainGrace, String dockerHost, int metricsPort, Duration replicaLease) {
  /** The metrics port when QUARRY_METRICS_PORT is not set (the Prometheus exporters' usual one). */
  public static final int DEFAULT_METRICS_PORT = 9464;

  /**
   * The defaults for a gateway embedded in a test or a benchmark: those of an empty configuration,
   * with the metrics on any free port (several such gateways run in one JVM).
   */
  public static final OpsSettings DEFAULTS =
      read(new Settings(Map.of()), dev.quarry.sandbox.SandboxSettings.DEFAULT_DOCKER_HOST).withMetricsPort(0);

  static OpsSettings read(Settings s, String dockerHost) {
    return new OpsSettings(s.seconds("QUARRY_DRAIN_GRACE_SECONDS", 120, 0, 3600), dockerHost,
        s.integer("QUARRY_METRICS_PORT", DEFAULT_METRICS_PORT, 0, 65535),
        s.seconds("QUARRY_REPLICA_LEASE_SECONDS", 15, 3, 600));
  }

  public OpsSettings withMetricsPort(int port) {
    return new OpsSettings(drainGrace, dockerHost, port, replicaLease);
  }
}
