package dev.quarry.ops;

import dev.quarry.sandbox.SandboxSettings;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Settings of the gateway's own operation (shutdown), read from the same configuration map as
 * {@link Config}.
 *
 * @param drainGrace how long running analyses get to finish after SIGTERM before they are
 *                   cancelled; Kubernetes' terminationGracePeriodSeconds must exceed it
 * @param dockerHost the engine that readiness pings (the same {@code DOCKER_HOST} the sandboxes use)
 */
public record OpsSettings(Duration drainGrace, String dockerHost) {
  public static final OpsSettings DEFAULTS = from(Map.of());

  public static OpsSettings from(Map<String, String> values) {
    return read(new Settings(values));
  }

  /** The settings this record reads, for the README check. */
  public static List<Settings.Definition> definitions() {
    Settings s = new Settings(Map.of());
    read(s);
    return s.definitions();
  }

  private static OpsSettings read(Settings s) {
    return new OpsSettings(
        s.seconds("QUARRY_DRAIN_GRACE_SECONDS", 120, 0, 3600),
        s.string("DOCKER_HOST", SandboxSettings.DEFAULT_DOCKER_HOST));
  }
}
