package dev.quarry.sandbox;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * How this gateway runs sandboxes. Read once at start-up ({@link #fromEnv}) and passed down.
 *
 * @param dockerHost      the engine, {@code DOCKER_HOST} (default the local Unix socket)
 * @param image           the sandbox image, {@code QUARRY_SANDBOX_IMAGE}
 * @param command         the container command; empty keeps the image's own
 * @param user            {@code uid[:gid]} to run as; blank takes the image's user unless that is root,
 *                        and then {@value #NOBODY}
 * @param gatewayId       this gateway instance, labelled on each of its containers; random per process
 *                        unless {@code QUARRY_GATEWAY_ID} is set
 * @param runRoot         host directory holding one sub-directory per sandbox (its socket dir)
 * @param limits          limits for a sandbox when the caller asks for nothing else
 * @param maxLimits       the most a caller may ask for
 * @param poolPerTenant   warm containers kept ready per tenant (0 disables the pool)
 * @param reapInterval    how often leftovers are looked for
 * @param reapAllOnStart  at start-up, also remove other gateways' sandboxes: right when this gateway
 *                        owns its engine (one engine per pod), wrong when gateways share one
 * @param maxActive       the most sandbox containers this gateway keeps at once, warm ones included
 *                        ({@link SandboxCapacity})
 * @param maxWait         how long a request waits for a free slot before it is refused
 */
public record SandboxSettings(
    String dockerHost,
    String image,
    List<String> command,
    String user,
    String gatewayId,
    Path runRoot,
    SandboxLimits limits,
    SandboxLimits maxLimits,
    int poolPerTenant,
    Duration reapInterval,
    boolean reapAllOnStart,
    int maxActive,
    Duration maxWait) {

  public static final String NOBODY = "65534:65534";
  public static final String DEFAULT_DOCKER_HOST = "unix:///var/run/docker.sock";
  /**
   * 16 sandboxes of the default 256 MiB fill the 4 GiB the pod's engine requests (k8s/base); on
   * another machine, size it as the engine's memory over {@code QUARRY_SANDBOX_MEMORY_MIB}.
   */
  public static final int DEFAULT_MAX_ACTIVE = 16;
  public static final int MAX_ACTIVE_BOUND = 1024;
  public static final Duration DEFAULT_MAX_WAIT = Duration.ofSeconds(10);
  public static final Duration MAX_WAIT_BOUND = Duration.ofMinutes(10);

  /** With the default capacity ({@link #DEFAULT_MAX_ACTIVE}, {@link #DEFAULT_MAX_WAIT}). */
  public SandboxSettings(String dockerHost, String image, List<String> command, String user, String gatewayId,
      Path runRoot, SandboxLimits limits, SandboxLimits maxLimits, int poolPerTenant, Duration reapInterval,
      boolean reapAllOnStart) {
    this(dockerHost, image, command, user, gatewayId, runRoot, limits, maxLimits, poolPerTenant, reapInterval,
        reapAllOnStart, DEFAULT_MAX_ACTIVE, DEFAULT_MAX_WAIT);
  }

  public SandboxSettings {
    command = List.copyOf(command);
    if (!gatewayId.matches("[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}")) {
      throw new IllegalArgumentException("gateway id '" + gatewayId
          + "' must be 1-63 characters of letters, digits, '_', '.', '-' (it names containers)");
    }
    limits.requireWithin(maxLimits);
    if (poolPerTenant < 0 || poolPerTenant > 64) {
      throw new IllegalArgumentException("poolPerTenant=" + poolPerTenant + " is out of bounds [0, 64]");
    }
    if (maxActive < 1 || maxActive > MAX_ACTIVE_BOUND) {
      throw new IllegalArgumentException("QUARRY_SANDBOX_MAX_ACTIVE=" + maxActive + " is out of bounds [1, "
          + MAX_ACTIVE_BOUND + "]");
    }
    if (maxWait.isNegative() || maxWait.compareTo(MAX_WAIT_BOUND) > 0) {
      throw new IllegalArgumentException("QUARRY_SANDBOX_WAIT_MS=" + maxWait.toMillis() + " is out of bounds [0, "
          + MAX_WAIT_BOUND.toMillis() + "]");
    }
  }

  public static SandboxSettings fromEnv(Map<String, String> env) {
    String command = env.getOrDefault("QUARRY_SANDBOX_COMMAND", "").trim();
    String gatewayId = env.getOrDefault("QUARRY_GATEWAY_ID", "").trim();
    return new SandboxSettings(
        nonBlank(env.get("DOCKER_HOST"), DEFAULT_DOCKER_HOST),
        nonBlank(env.get("QUARRY_SANDBOX_IMAGE"), "quarry-sandbox:latest"),
        command.isEmpty() ? List.of() : Arrays.asList(command.split("\\s+")),
        env.getOrDefault("QUARRY_SANDBOX_USER", "").trim(),
        gatewayId.isEmpty() ? "gw-" + UUID.randomUUID().toString().substring(0, 8) : gatewayId,
        Path.of(nonBlank(env.get("QUARRY_SANDBOX_RUN_DIR"), "var/run/sandboxes")).toAbsolutePath(),
        SandboxLimits.fromEnv(env),
        SandboxLimits.MAXIMUMS,
        integer(env, "QUARRY_SANDBOX_POOL_PER_TENANT", 2, 0, 64),
        Duration.ofSeconds(integer(env, "QUARRY_SANDBOX_REAP_SECONDS", 60, 1, 86_400)),
        Boolean.parseBoolean(env.getOrDefault("QUARRY_SANDBOX_REAP_ALL_ON_START", "false").trim()),
        integer(env, "QUARRY_SANDBOX_MAX_ACTIVE", DEFAULT_MAX_ACTIVE, 1, MAX_ACTIVE_BOUND),
        Duration.ofMillis(integer(env, "QUARRY_SANDBOX_WAIT_MS", (int) DEFAULT_MAX_WAIT.toMillis(), 0,
            (int) MAX_WAIT_BOUND.toMillis())));
  }

  public SandboxSettings withPoolPerTenant(int size) {
    return new SandboxSettings(dockerHost, image, command, user, gatewayId, runRoot, limits, maxLimits,
        size, reapInterval, reapAllOnStart, maxActive, maxWait);
  }

  /** The same settings with another sandbox limit and wait for a slot. */
  public SandboxSettings withCapacity(int maxActive, Duration maxWait) {
    return new SandboxSettings(dockerHost, image, command, user, gatewayId, runRoot, limits, maxLimits,
        poolPerTenant, reapInterval, reapAllOnStart, maxActive, maxWait);
  }

  private static String nonBlank(String v, String dflt) {
    return v == null || v.isBlank() ? dflt : v.trim();
  }

  private static int integer(Map<String, String> env, String name, int dflt, int min, int max) {
    String v = env.get(name);
    if (v == null || v.isBlank()) {
      return dflt;
    }
    try {
      int n = Integer.parseInt(v.trim());
      if (n >= min && n <= max) {
        return n;
      }
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + "=" + v + " is not an integer");
    }
    throw new IllegalArgumentException(name + "=" + v + " is out of bounds [" + min + ", " + max + "]");
  }
}
