package dev.quarry.sandbox;

import dev.quarry.config.Records;
import dev.quarry.config.InvalidSetting;
import dev.quarry.config.Settings;
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
 * @param fairness        what one tenant may take of this gateway's sandboxes and callbacks
 * @param mountPolicy     whether the gateway refuses to start when a sandbox's mountinfo would show host
 *                        paths of its directories ({@link MountPrivacy}), {@code QUARRY_SANDBOX_MOUNT_PRIVACY}
 * @param pull            how the image is pulled when the engine lacks it ({@link SandboxHealth})
 * @param cpu             how the engine's CPUs are shared: what the sandboxes' limits may add up to, and
 *                        the tenants' groups ({@link Cpu})
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
    Duration maxWait,
    Fairness fairness,
    MountPrivacy.Policy mountPolicy,
    ImagePull pull,
    Cpu cpu) {

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
  /** The most a request's wall time may ask by default: two minutes, so a held sandbox comes back soon. */
  public static final int DEFAULT_MAX_CELL_SECONDS = 120;

  /**
   * What keeps one tenant from taking the gateway (issue 14): a tenant holds at most
   * {@code tenantSharePercent} of the sandbox slots (and never more than its
   * {@code concurrent_sandboxes} quota); a sandbox has at most {@code callbacksPerSandbox} callbacks
   * served at once and a tenant {@code callbacksPerTenant} across its sandboxes, the rest waiting
   * their turn; a sandbox whose runner leaves the gateway's replies unread for {@code stallTimeout}
   * is killed. An execution makes at most {@code executionCallbacks} callbacks unless it asks for
   * more ({@code limits.callbacks}), up to {@code maxExecutionCallbacks}.
   */
  public record Fairness(int tenantSharePercent, int callbacksPerSandbox, int callbacksPerTenant,
      Duration stallTimeout, int executionCallbacks, int maxExecutionCallbacks) {
    public static final Fairness DEFAULTS = new Fairness(50, 4, 8, Duration.ofSeconds(10), 200, 2000);

    public Fairness {
      bound("QUARRY_SANDBOX_TENANT_SHARE_PERCENT", tenantSharePercent, 1, 100);
      bound("QUARRY_SANDBOX_CALLBACKS_IN_FLIGHT", callbacksPerSandbox, 1, 256);
      bound("QUARRY_TENANT_CALLBACKS_IN_FLIGHT", callbacksPerTenant, 1, 4096);
      bound("QUARRY_SANDBOX_STALL_MS", stallTimeout.toMillis(), 100, 600_000);
      bound("QUARRY_MAX_EXECUTION_CALLBACKS", maxExecutionCallbacks, 1, 100_000);
      bound("QUARRY_EXECUTION_CALLBACKS", executionCallbacks, 1, maxExecutionCallbacks);
    }

    /** The same with another share: 100 for a gateway that serves one tenant (benchmarks, capacity tests). */
    public Fairness withTenantSharePercent(int percent) {
      return Records.with(this, "tenantSharePercent", percent);
    }

    /**
     * The most sandboxes one tenant may hold of {@code maxActive} (waiting for a slot included): its
     * share, at least one; 100 percent is no limit at all (it may also queue for more).
     */
    public int tenantShare(int maxActive) {
      return tenantSharePercent >= 100 ? Integer.MAX_VALUE : Math.max(1, maxActive * tenantSharePercent / 100);
    }

    private static void bound(String name, long v, long min, long max) {
      if (v < min || v > max) {
        throw new IllegalArgumentException(name + "=" + v + " is out of bounds [" + min + ", " + max + "]");
      }
    }
  }

  /**
   * How the engine's CPUs are shared between sandboxes (issue 33, class 5). The sandboxes' CPU limits
   * add up to at most the engine's CPUs times {@code overcommit}: the gateway keeps no more containers
   * than that allows ({@link SandboxService#start}), and a tenant's share of them
   * ({@code QUARRY_SANDBOX_TENANT_SHARE_PERCENT}) bounds its CPU as it bounds its sandboxes. Each
   * tenant's containers are put under a cgroup of their own, {@code cgroupParent}, so that under
   * contention the kernel shares the CPU between tenants, not between containers ({@link TenantCgroups}).
   *
   * @param overcommit   {@code QUARRY_SANDBOX_CPU_OVERCOMMIT}: sandboxes are mostly idle (they wait on the
   *                     model), so their limits may add up to more than the engine has
   * @param engineCpus   {@code QUARRY_SANDBOX_ENGINE_CPUS}: the CPUs the engine may give; 0 takes the engine's
   *                     own count ({@code docker info}), which in a container is the node's, not its limit's
   * @param cgroupParent {@code QUARRY_SANDBOX_CGROUP_PARENT}: the name under which each tenant's group is
   *                     made; empty ({@value #NO_GROUPS} in the setting) leaves every container in the
   *                     engine's default group
   */
  public record Cpu(double overcommit, double engineCpus, String cgroupParent) {
    public static final double DEFAULT_OVERCOMMIT = 4;
    /** The setting's word for no group per tenant. */
    public static final String NO_GROUPS = "none";
    public static final double MAX_OVERCOMMIT = 64;
    public static final Cpu DEFAULTS = new Cpu(DEFAULT_OVERCOMMIT, 0, "quarry");
    /** No bound from the CPUs (tests of the capacity itself, a gateway sized by hand). */
    public static final Cpu UNBOUNDED = new Cpu(MAX_OVERCOMMIT, 0, "quarry");

    public Cpu {
      if (!(overcommit >= 0.1 && overcommit <= MAX_OVERCOMMIT)) {
        throw new IllegalArgumentException("QUARRY_SANDBOX_CPU_OVERCOMMIT=" + overcommit + " is out of bounds [0.1, "
            + MAX_OVERCOMMIT + "]");
      }
      if (!(engineCpus >= 0 && engineCpus <= 4096)) {
        throw new IllegalArgumentException("QUARRY_SANDBOX_ENGINE_CPUS=" + engineCpus + " is out of bounds [0, 4096]");
      }
      java.util.Objects.requireNonNull(cgroupParent, "cgroupParent");
      if (!cgroupParent.matches("[a-zA-Z0-9_]{0,32}")) {
        throw new IllegalArgumentException("QUARRY_SANDBOX_CGROUP_PARENT='" + cgroupParent
            + "' must be up to 32 letters, digits or '_' (empty: no group per tenant)");
      }
    }

    /**
     * The most sandboxes of {@code nanoCpus} each the engine's {@code cpus} may carry, at least 0:
     * their limits add up to at most {@code cpus × overcommit}.
     */
    public int sandboxes(double cpus, long nanoCpus) {
      return (int) Math.min(Integer.MAX_VALUE, Math.floor(cpus * overcommit * 1e9 / nanoCpus + 1e-9));
    }
  }

  /** With the default capacity ({@link #DEFAULT_MAX_ACTIVE}, {@link #DEFAULT_MAX_WAIT}). */
  public SandboxSettings(String dockerHost, String image, List<String> command, String user, String gatewayId,
      Path runRoot, SandboxLimits limits, SandboxLimits maxLimits, int poolPerTenant, Duration reapInterval,
      boolean reapAllOnStart) {
    this(dockerHost, image, command, user, gatewayId, runRoot, limits, maxLimits, poolPerTenant, reapInterval,
        reapAllOnStart, DEFAULT_MAX_ACTIVE, DEFAULT_MAX_WAIT);
  }

  /** With the default fairness ({@link Fairness#DEFAULTS}). */
  public SandboxSettings(String dockerHost, String image, List<String> command, String user, String gatewayId,
      Path runRoot, SandboxLimits limits, SandboxLimits maxLimits, int poolPerTenant, Duration reapInterval,
      boolean reapAllOnStart, int maxActive, Duration maxWait) {
    this(dockerHost, image, command, user, gatewayId, runRoot, limits, maxLimits, poolPerTenant, reapInterval,
        reapAllOnStart, maxActive, maxWait, Fairness.DEFAULTS);
  }

  /** With the default mount policy ({@link MountPrivacy.Policy#WARN}, as the environment's). */
  public SandboxSettings(String dockerHost, String image, List<String> command, String user, String gatewayId,
      Path runRoot, SandboxLimits limits, SandboxLimits maxLimits, int poolPerTenant, Duration reapInterval,
      boolean reapAllOnStart, int maxActive, Duration maxWait, Fairness fairness) {
    this(dockerHost, image, command, user, gatewayId, runRoot, limits, maxLimits, poolPerTenant, reapInterval,
        reapAllOnStart, maxActive, maxWait, fairness, MountPrivacy.Policy.WARN);
  }

  /** With anonymous pulls ({@link ImagePull#ANONYMOUS}) and the default sharing of CPUs ({@link Cpu#DEFAULTS}). */
  public SandboxSettings(String dockerHost, String image, List<String> command, String user, String gatewayId,
      Path runRoot, SandboxLimits limits, SandboxLimits maxLimits, int poolPerTenant, Duration reapInterval,
      boolean reapAllOnStart, int maxActive, Duration maxWait, Fairness fairness, MountPrivacy.Policy mountPolicy) {
    this(dockerHost, image, command, user, gatewayId, runRoot, limits, maxLimits, poolPerTenant, reapInterval,
        reapAllOnStart, maxActive, maxWait, fairness, mountPolicy, ImagePull.ANONYMOUS, Cpu.DEFAULTS);
  }

  public SandboxSettings {
    command = List.copyOf(command);
    java.util.Objects.requireNonNull(pull, "pull");
    java.util.Objects.requireNonNull(fairness, "fairness");
    java.util.Objects.requireNonNull(mountPolicy, "mountPolicy");
    java.util.Objects.requireNonNull(cpu, "cpu");
    if (!gatewayId.matches("[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}")) {
      throw new IllegalArgumentException("QUARRY_GATEWAY_ID='" + gatewayId
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

  /** From one configuration map (the environment over the optional file, {@code ConfigSource}). */
  public static SandboxSettings fromEnv(Map<String, String> values) {
    return read(new Settings(values));
  }

  /** Reads every {@code QUARRY_SANDBOX_*} setting; a bad one fails with {@link InvalidSetting}. */
  public static SandboxSettings read(Settings s) {
    String command = s.string("QUARRY_SANDBOX_COMMAND", "");
    String gatewayId = s.optional("QUARRY_GATEWAY_ID", "random per process");
    int maxCellSeconds = s.integer("QUARRY_SANDBOX_MAX_CELL_SECONDS", DEFAULT_MAX_CELL_SECONDS, 1,
        (int) SandboxLimits.MAXIMUMS.cellWallTime().toSeconds());
    SandboxLimits limits = SandboxLimits.read(s, maxCellSeconds);
    int maxExecutionCallbacks = s.integer("QUARRY_MAX_EXECUTION_CALLBACKS",
        Fairness.DEFAULTS.maxExecutionCallbacks(), 1, 100_000);
    Fairness fairness = new Fairness(
        s.integer("QUARRY_SANDBOX_TENANT_SHARE_PERCENT", Fairness.DEFAULTS.tenantSharePercent(), 1, 100),
        s.integer("QUARRY_SANDBOX_CALLBACKS_IN_FLIGHT", Fairness.DEFAULTS.callbacksPerSandbox(), 1, 256),
        s.integer("QUARRY_TENANT_CALLBACKS_IN_FLIGHT", Fairness.DEFAULTS.callbacksPerTenant(), 1, 4096),
        Duration.ofMillis(s.integer("QUARRY_SANDBOX_STALL_MS", (int) Fairness.DEFAULTS.stallTimeout().toMillis(),
            100, 600_000)),
        s.integerUpTo("QUARRY_EXECUTION_CALLBACKS", Math.min(Fairness.DEFAULTS.executionCallbacks(),
            maxExecutionCallbacks), 1, "QUARRY_MAX_EXECUTION_CALLBACKS", maxExecutionCallbacks),
        maxExecutionCallbacks);
    String dockerHost = s.string("DOCKER_HOST", DEFAULT_DOCKER_HOST);
    String image = s.string("QUARRY_SANDBOX_IMAGE", "quarry-sandbox:latest");
    String user = s.string("QUARRY_SANDBOX_USER", "");
    Path runRoot = Path.of(s.string("QUARRY_SANDBOX_RUN_DIR", "var/run/sandboxes")).toAbsolutePath();
    int pool = s.integer("QUARRY_SANDBOX_POOL_PER_TENANT", 2, 0, 64);
    Duration reap = Duration.ofSeconds(s.integer("QUARRY_SANDBOX_REAP_SECONDS", 60, 1, 86_400));
    boolean reapAll = s.bool("QUARRY_SANDBOX_REAP_ALL_ON_START", false);
    int maxActive = s.integer("QUARRY_SANDBOX_MAX_ACTIVE", DEFAULT_MAX_ACTIVE, 1, MAX_ACTIVE_BOUND);
    Duration maxWait = Duration.ofMillis(s.integer("QUARRY_SANDBOX_WAIT_MS", (int) DEFAULT_MAX_WAIT.toMillis(), 0,
        (int) MAX_WAIT_BOUND.toMillis()));
    MountPrivacy.Policy mounts = MountPrivacy.Policy.fromEnv(s.oneOf("QUARRY_SANDBOX_MOUNT_PRIVACY", "warn", "require",
        "warn"));
    ImagePull pull = ImagePull.read(s);
    double overcommit = s.decimal("QUARRY_SANDBOX_CPU_OVERCOMMIT", Cpu.DEFAULT_OVERCOMMIT, 0.1, Cpu.MAX_OVERCOMMIT);
    double engineCpus = s.decimal("QUARRY_SANDBOX_ENGINE_CPUS", 0, 0, 4096);
    String cgroupParent = s.string("QUARRY_SANDBOX_CGROUP_PARENT", Cpu.DEFAULTS.cgroupParent(),
        Cpu.NO_GROUPS + ", or up to 32 letters, digits and _");
    if (cgroupParent.equals(Cpu.NO_GROUPS)) {
      cgroupParent = "";
    }
    try {
      return new SandboxSettings(dockerHost, image,
          command.isEmpty() ? List.of() : Arrays.asList(command.split("\\s+")),
          user,
          gatewayId.isEmpty() ? "gw-" + UUID.randomUUID().toString().substring(0, 8) : gatewayId,
          runRoot, limits, SandboxLimits.MAXIMUMS.withCellWallTime(Duration.ofSeconds(maxCellSeconds)),
          pool, reap, reapAll, maxActive, maxWait, fairness, mounts, pull,
          new Cpu(overcommit, engineCpus, cgroupParent));
    } catch (IllegalArgumentException e) {
      // The constructor's own checks (the gateway id's form): the same error as every other setting.
      throw new InvalidSetting(e.getMessage());
    }
  }

  /** The same settings with another sharing of CPUs. */
  public SandboxSettings withCpu(Cpu cpu) {
    return Records.with(this, "cpu", cpu);
  }

  public SandboxSettings withPoolPerTenant(int size) {
    return Records.with(this, "poolPerTenant", size);
  }

  /** The same settings with another sandbox limit and wait for a slot. */
  public SandboxSettings withCapacity(int maxActive, Duration maxWait) {
    return Records.with(this, java.util.Map.of("maxActive", maxActive, "maxWait", maxWait));
  }

  /** The same settings with other fairness limits. */
  public SandboxSettings withFairness(Fairness fairness) {
    return Records.with(this, "fairness", fairness);
  }

  /** The same settings with another run directory. */
  public SandboxSettings withRunRoot(Path runRoot) {
    return Records.with(this, "runRoot", runRoot);
  }

  /** The same settings with another image (tests: one that only a registry has). */
  public SandboxSettings withImage(String image) {
    return Records.with(this, "image", image);
  }

  /** The same settings with other pull credentials and timeout. */
  public SandboxSettings withPull(ImagePull pull) {
    return Records.with(this, "pull", pull);
  }

  /** The same settings with another mount policy. */
  public SandboxSettings withMountPolicy(MountPrivacy.Policy mountPolicy) {
    return Records.with(this, "mountPolicy", mountPolicy);
  }


}
