package dev.quarry.sandbox;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.command.CreateContainerResponse;
import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.command.WaitContainerResultCallback;
import com.github.dockerjava.api.exception.BadRequestException;
import com.github.dockerjava.api.exception.ConflictException;
import com.github.dockerjava.api.exception.DockerClientException;
import com.github.dockerjava.api.exception.DockerException;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.AccessMode;
import com.github.dockerjava.api.model.Bind;
import com.github.dockerjava.api.model.Capability;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.LogConfig;
import com.github.dockerjava.api.model.StreamType;
import com.github.dockerjava.api.model.Ulimit;
import com.github.dockerjava.api.model.Volume;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.zerodep.ZerodepDockerHttpClient;
import dev.quarry.config.HostPaths;
import dev.quarry.sandbox.ContainerException.Reason;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates, starts, kills and removes hardened sandbox containers through docker-java.
 *
 * <p>Every call blocks on the engine: run it on a worker thread, never on an event loop. Every
 * failure surfaces as a {@link ContainerException}; a launch that fails part-way removes what it
 * created (container and run directory) before throwing.
 *
 * <p>The launcher remembers which sandboxes it has alive ({@link #liveIds()}) so the {@link Reaper}
 * can tell a leftover from a sandbox that is merely in use.
 */
public final class ContainerLauncher {
  private static final Logger log = LoggerFactory.getLogger(ContainerLauncher.class);

  public static final String SOCKET_DIR = "/run/quarry";
  public static final String SOCKET_NAME = "sandbox.sock";
  public static final String DOCUMENTS_DIR = "/documents";

  public static final String LABEL_SANDBOX = "quarry.sandbox";
  public static final String LABEL_SANDBOX_ID = "quarry.sandbox.id";
  public static final String LABEL_GATEWAY = "quarry.gateway";
  public static final String LABEL_TENANT = "quarry.tenant";
  public static final String LABEL_CREATED = "quarry.created";

  private static final SecureRandom RANDOM = new SecureRandom();

  private final DockerClient docker;
  private final SandboxSettings settings;
  /** Where scoped sandboxes' views are; null for a launcher that never starts one. */
  private final ScopedViews views;
  private final Set<String> live = ConcurrentHashMap.newKeySet();
  private final TenantCgroups cgroups;
  private volatile String resolvedUser;
  private volatile Engine engine;

  public ContainerLauncher(DockerClient docker, SandboxSettings settings) {
    this(docker, settings, null);
  }

  /** @param views where this launcher's scoped sandboxes have their /documents; removed with them */
  ContainerLauncher(DockerClient docker, SandboxSettings settings, ScopedViews views) {
    this.docker = docker;
    this.settings = settings;
    this.views = views;
    this.cgroups = new TenantCgroups(settings.cpu().cgroupParent(), () -> engine().cgroupDriver(),
        TenantCgroups.CGROUP_ROOT);
  }

  /** What the engine says of itself: its CPUs, its memory, its cgroup driver. */
  public record Engine(int cpus, long memoryBytes, String cgroupDriver) {}

  /** The engine's {@link Engine}, asked once (blocking). */
  public Engine engine() {
    Engine e = engine;
    if (e == null) {
      try {
        var info = docker.infoCmd().exec();
        e = new Engine(info.getNCPU() == null ? 0 : info.getNCPU(), info.getMemTotal() == null ? 0 : info.getMemTotal(),
            info.getCGroupDriver() == null ? "cgroupfs" : info.getCGroupDriver());
      } catch (RuntimeException ex) {
        throw map("ask the Docker engine about itself", ex);
      }
      engine = e;
    }
    return e;
  }

  /** The tenants' cgroups of this launcher's containers. */
  TenantCgroups cgroups() {
    return cgroups;
  }

  /** Where this launcher's scoped views are, or null. */
  ScopedViews views() {
    return views;
  }

  /**
   * A new sandbox id, counted alive from now on (the {@link Reaper} leaves what carries it alone)
   * until it is launched and removed, or {@link #release released}: so that what is prepared for a
   * sandbox before its launch (its scoped view) is never taken for a leftover.
   */
  public String reserve() {
    String id = HexFormat.of().formatHex(randomBytes());
    live.add(id);
    return id;
  }

  /** A reserved id that will not be launched: its scoped view (if any) goes, and the id with it. */
  public void release(String id) {
    try {
      if (views != null) {
        views.remove(id);
      }
    } finally {
      live.remove(id);
    }
  }

  /** Whether the sandbox is reserved, launched or not yet removed, now. */
  public boolean isLive(String id) {
    return live.contains(id);
  }

  /** The one Docker client of the gateway, over the dependency-free transport. */
  public static DockerClient connect(String dockerHost) {
    DefaultDockerClientConfig config = DefaultDockerClientConfig.createDefaultConfigBuilder()
        .withDockerHost(dockerHost)
        .build();
    ZerodepDockerHttpClient http = new ZerodepDockerHttpClient.Builder()
        .dockerHost(config.getDockerHost())
        .sslConfig(config.getSSLConfig())
        .maxConnections(64)
        .connectionTimeout(Duration.ofSeconds(5))
        .responseTimeout(Duration.ofSeconds(60))
        .build();
    return DockerClientImpl.getInstance(config, http);
  }

  public SandboxSettings settings() {
    return settings;
  }

  /** Launches a sandbox for the tenant with the default limits and command. */
  public Sandbox launch(UUID tenantId, Path documentsDir) {
    return launch(tenantId, documentsDir, settings.limits(), settings.command());
  }

  /**
   * Creates and starts a container: no network, read-only root, no capabilities, no new privileges,
   * a non-root user, the given limits, {@code documentsDir} read-only at /documents and a fresh
   * run directory read-write at /run/quarry. Returns once the engine has started it; whether the
   * command inside came up is for the caller's readiness handshake to tell.
   *
   * @param command the container command; empty keeps the image's
   */
  public Sandbox launch(UUID tenantId, Path documentsDir, SandboxLimits limits, List<String> command) {
    return launch(tenantId, limits, command, runDir -> documentsDir);
  }

  /**
   * Like {@link #launch(UUID, Path, SandboxLimits, List)}, but lets the caller prepare the fresh run
   * directory before the container exists (the gateway's socket must be there before the runner
   * dials it) and choose the documents directory then.
   * A failing {@code setup} removes the run directory like any other failed launch.
   */
  public Sandbox launch(UUID tenantId, SandboxLimits limits, List<String> command, RunDirSetup setup) {
    return launch(reserve(), tenantId, limits, command, setup);
  }

  /** As {@link #launch(UUID, SandboxLimits, List, RunDirSetup)}, under an id {@link #reserve reserved} for it. */
  public Sandbox launch(String id, UUID tenantId, SandboxLimits limits, List<String> command, RunDirSetup setup) {
    try {
      limits.requireWithin(settings.maxLimits());
    } catch (IllegalArgumentException e) {
      release(id);
      throw e;
    }
    Instant created = Instant.now();
    live.add(id);
    // From here every path ends in remove() or cleanUp(), which say the container is gone.
    cgroups.entering(tenantId);
    Path runDir = settings.runRoot().resolve(settings.gatewayId()).resolve(id);
    String containerId = null;
    try {
      createRunDir(runDir);
      Path docs = prepare(setup, runDir).toAbsolutePath().normalize();
      if (!Files.isDirectory(docs)) {
        // Docker would silently create a missing bind source, owned by root and empty.
        log.warn("sandbox {}: its documents directory {} does not exist", id, docs);
        throw new IllegalArgumentException("the tenant's documents directory does not exist");
      }
      containerId = create(id, tenantId, docs, runDir, limits, command, created);
      start(containerId);
      return new Sandbox(id, containerId, tenantId, runDir, created);
    } catch (RuntimeException e) {
      cleanUp(id, tenantId, containerId, runDir, e);
      throw e;
    }
  }

  private static Path prepare(RunDirSetup setup, Path runDir) {
    try {
      return setup.prepare(runDir);
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      // The client is told why, never where: the run directory is a host path (README, Security).
      log.warn("cannot prepare sandbox run directory {}: {}", runDir, e.toString());
      throw new ContainerException(Reason.HOST_IO, "cannot prepare the sandbox's run directory ("
          + HostPaths.reason(e) + ")", e);
    }
  }

  /** Prepares a new run directory before its container is created; returns the documents directory. */
  @FunctionalInterface
  public interface RunDirSetup {
    Path prepare(Path runDir) throws Exception;
  }

  /**
   * What every sandbox container gets whatever it runs: no network, a read-only root, no
   * capabilities and no way to gain any, and the resource limits. The benchmarks' docker run/exec
   * baselines use it too, so that they compare like with like.
   */
  public static HostConfig lockedDown(SandboxLimits limits) {
    return HostConfig.newHostConfig()
        .withNetworkMode("none")
        .withReadonlyRootfs(true)
        .withCapDrop(Capability.ALL)
        .withSecurityOpts(List.of("no-new-privileges:true"))
        .withPidsLimit(limits.pidsLimit())
        .withMemory(limits.memoryBytes())
        .withMemorySwap(limits.memoryBytes())
        .withNanoCPUs(limits.nanoCpus())
        .withUlimits(List.of(new Ulimit("nofile", limits.nofile(), limits.nofile())))
        .withTmpFs(Map.of("/tmp", "rw,noexec,nosuid,nodev,mode=1777,size=" + limits.tmpfsBytes()));
  }

  private static byte[] randomBytes() {
    byte[] b = new byte[6];
    RANDOM.nextBytes(b);
    return b;
  }

  private String create(String id, UUID tenantId, Path docs, Path runDir, SandboxLimits limits,
      List<String> command, Instant created) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put(LABEL_SANDBOX, "1");
    labels.put(LABEL_SANDBOX_ID, id);
    labels.put(LABEL_GATEWAY, settings.gatewayId());
    labels.put(LABEL_TENANT, tenantId.toString());
    labels.put(LABEL_CREATED, Long.toString(created.getEpochSecond()));

    HostConfig host = lockedDown(limits)
        .withBinds(
            new Bind(docs.toString(), new Volume(DOCUMENTS_DIR), AccessMode.ro),
            new Bind(runDir.toString(), new Volume(SOCKET_DIR), AccessMode.rw))
        .withIpcMode("private")
        // The tenant's group: the kernel shares the CPU between tenants, not between containers.
        .withCgroupParent(cgroups.parentOf(tenantId))
        // A tiny init as PID 1 reaps the orphans hostile code leaves behind; zombies would
        // otherwise hold on to the pids limit for the sandbox's whole life.
        .withInit(true)
        .withAutoRemove(false)
        // Output travels over gRPC; the engine's log is only for post-mortems, so keep it small.
        .withLogConfig(new LogConfig(LogConfig.LoggingType.JSON_FILE,
            Map.of("max-size", "1m", "max-file", "1")));

    var cmd = docker.createContainerCmd(settings.image())
        .withName("quarry-" + settings.gatewayId() + "-" + id)
        .withHostName("sandbox")
        .withUser(user())
        // One hash seed for every sandbox: a cell that iterates a set of strings prints the same order
        // in every sandbox, so a cell run again to rebuild an analysis gives its recorded output.
        .withEnv("QUARRY_SOCKET=" + SOCKET_DIR + "/" + SOCKET_NAME, "PYTHONHASHSEED=0")
        .withLabels(labels)
        .withNetworkDisabled(true)
        .withHostConfig(host);
    if (!command.isEmpty()) {
      cmd.withCmd(command);
    }
    try {
      CreateContainerResponse response = cmd.exec();
      return response.getId();
    } catch (NotFoundException e) {
      throw new ContainerException(Reason.IMAGE_MISSING,
          "sandbox image " + settings.image() + " is not in the Docker engine (build it first)", e);
    } catch (RuntimeException e) {
      throw map("create sandbox container", e);
    }
  }

  private void start(String containerId) {
    try {
      docker.startContainerCmd(containerId).exec();
    } catch (RuntimeException e) {
      throw map("start sandbox container " + containerId, e);
    }
  }

  /** The image's own user when it has a non-root one, else nobody; the configured one wins. */
  String user() {
    String u = resolvedUser;
    if (u != null) {
      return u;
    }
    if (!settings.user().isBlank()) {
      u = settings.user();
    } else {
      String imageUser;
      try {
        imageUser = docker.inspectImageCmd(settings.image()).exec().getConfig().getUser();
      } catch (NotFoundException e) {
        throw new ContainerException(Reason.IMAGE_MISSING,
            "sandbox image " + settings.image() + " is not in the Docker engine (build it first)", e);
      } catch (RuntimeException e) {
        throw map("inspect sandbox image " + settings.image(), e);
      }
      u = isRoot(imageUser) ? SandboxSettings.NOBODY : imageUser;
    }
    if (isRoot(u)) {
      throw new IllegalArgumentException("sandbox user '" + u + "' is root; sandboxes never run as root");
    }
    resolvedUser = u;
    return u;
  }

  private static boolean isRoot(String user) {
    if (user == null || user.isBlank()) {
      return true;
    }
    String uid = user.split(":", 2)[0].trim();
    return uid.equals("0") || uid.equals("root");
  }

  /**
   * Sends SIGKILL. Returns false when the container was not running or is gone, which for a kill
   * means the same thing: it is not running any more.
   */
  public boolean kill(Sandbox sandbox) {
    try {
      docker.killContainerCmd(sandbox.containerId()).exec();
      return true;
    } catch (NotFoundException | ConflictException e) {
      return false;
    } catch (RuntimeException e) {
      throw map("kill sandbox " + sandbox.id(), e);
    }
  }

  /**
   * Force-removes the container, its run directory and its scoped view. Idempotent: a gone container
   * is fine.
   */
  public void remove(Sandbox sandbox) {
    try {
      removeContainer(sandbox.containerId());
      deleteRunDir(sandbox.runDir());
      if (views != null) {
        views.remove(sandbox.id());
      }
    } finally {
      if (live.remove(sandbox.id())) {
        cgroups.left(sandbox.tenantId());
      }
    }
  }

  /** Removes a container by id, tolerating one that is already gone or already being removed. */
  void removeContainer(String containerId) {
    try {
      docker.removeContainerCmd(containerId).withForce(true).withRemoveVolumes(true).exec();
    } catch (NotFoundException e) {
      // Already gone: the goal of a removal.
    } catch (ConflictException e) {
      if (!String.valueOf(e.getMessage()).contains("already in progress")) {
        throw map("remove sandbox container " + containerId, e);
      }
    } catch (RuntimeException e) {
      throw map("remove sandbox container " + containerId, e);
    }
  }

  /** What the engine knows of the container now. */
  public ContainerState state(Sandbox sandbox) {
    try {
      InspectContainerResponse.ContainerState s =
          docker.inspectContainerCmd(sandbox.containerId()).exec().getState();
      return new ContainerState(Boolean.TRUE.equals(s.getRunning()), Boolean.TRUE.equals(s.getOOMKilled()),
          s.getExitCodeLong() == null ? 0 : s.getExitCodeLong());
    } catch (RuntimeException e) {
      throw map("inspect sandbox " + sandbox.id(), e);
    }
  }

  /** How long {@link #exitState} waits for the engine's OOM flag to follow a SIGKILL exit. */
  static final Duration OOM_FLAG_WAIT = Duration.ofSeconds(2);

  /**
   * Waits for the container to exit, then returns its state once the engine has settled it. The
   * engine learns of an OOM kill from its own event, which can arrive after the exit (seen under
   * load: exit code 137, {@code oomKilled} false for a moment). A SIGKILL exit (137) without the flag
   * is therefore read again for up to {@link #OOM_FLAG_WAIT} before it is believed.
   */
  public ContainerState exitState(Sandbox sandbox, Duration timeout) {
    awaitExit(sandbox, timeout);
    ContainerState state = state(sandbox);
    long deadline = System.nanoTime() + OOM_FLAG_WAIT.toNanos();
    while (!state.running() && !state.oomKilled() && state.exitCode() == 137 && System.nanoTime() < deadline) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(25));
      state = state(sandbox);
    }
    return state;
  }

  /** Waits for the container to exit and returns its exit code; fails after {@code timeout}. */
  public long awaitExit(Sandbox sandbox, Duration timeout) {
    try {
      Integer code = docker.waitContainerCmd(sandbox.containerId())
          .exec(new WaitContainerResultCallback())
          .awaitStatusCode(timeout.toMillis(), TimeUnit.MILLISECONDS);
      return code == null ? -1 : code;
    } catch (DockerClientException e) {
      throw new ContainerException(Reason.ENGINE_ERROR,
          "sandbox " + sandbox.id() + " did not exit within " + timeout + ": " + e.getMessage(), e);
    } catch (RuntimeException e) {
      throw map("wait for sandbox " + sandbox.id(), e);
    }
  }

  /**
   * Runs a command inside the running sandbox (as its user) and collects its output. Diagnostics
   * and the exec-per-cell baseline of the benchmark use it; cells themselves go over gRPC.
   */
  public ExecResult exec(Sandbox sandbox, List<String> command, Duration timeout) {
    StringBuilder out = new StringBuilder();
    StringBuilder err = new StringBuilder();
    try {
      String execId = docker.execCreateCmd(sandbox.containerId())
          .withCmd(command.toArray(String[]::new))
          .withAttachStdout(true)
          .withAttachStderr(true)
          .exec()
          .getId();
      ResultCallback.Adapter<Frame> callback = new ResultCallback.Adapter<>() {
        @Override
        public void onNext(Frame frame) {
          String text = new String(frame.getPayload(), StandardCharsets.UTF_8);
          synchronized (out) {
            (frame.getStreamType() == StreamType.STDERR ? err : out).append(text);
          }
        }
      };
      try (var running = docker.execStartCmd(execId).exec(callback)) {
        if (!running.awaitCompletion(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
          throw new ContainerException(Reason.ENGINE_ERROR,
              "exec " + command + " in sandbox " + sandbox.id() + " did not finish within " + timeout, null);
        }
      }
      Long code = docker.inspectExecCmd(execId).exec().getExitCodeLong();
      synchronized (out) {
        return new ExecResult(code == null ? -1 : code, out.toString(), err.toString());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ContainerException(Reason.ENGINE_ERROR, "interrupted while running exec", e);
    } catch (IOException e) {
      throw new ContainerException(Reason.ENGINE_UNREACHABLE, "exec stream failed: " + e.getMessage(), e);
    } catch (ContainerException e) {
      throw e;
    } catch (RuntimeException e) {
      throw map("exec in sandbox " + sandbox.id(), e);
    }
  }

  /** Ids of the sandboxes this launcher created and has not removed yet. */
  public Set<String> liveIds() {
    return Set.copyOf(live);
  }

  private static void createRunDir(Path runDir) {
    try {
      Files.createDirectories(runDir.getParent());
      Files.createDirectory(runDir);
      // The sandbox user (not the gateway's) must reach the socket inside.
      Files.setPosixFilePermissions(runDir, PosixFilePermissions.fromString("rwxr-xr-x"));
    } catch (IOException e) {
      log.warn("cannot create sandbox run directory {}: {}", runDir, e.toString());
      throw new ContainerException(Reason.HOST_IO, "cannot create the sandbox's run directory ("
          + HostPaths.reason(e) + ")", e);
    }
  }

  /** Deletes a run directory and whatever the gateway left in it (the socket). */
  static void deleteRunDir(Path runDir) {
    try {
      if (!Files.exists(runDir)) {
        return;
      }
      try (var paths = Files.walk(runDir)) {
        for (Path p : paths.sorted((a, b) -> b.getNameCount() - a.getNameCount()).toList()) {
          Files.deleteIfExists(p);
        }
      }
    } catch (IOException | UncheckedIOException e) {
      log.warn("cannot delete sandbox run directory {}: {}", runDir, e.toString());
      throw new ContainerException(Reason.HOST_IO, "cannot delete the sandbox's run directory ("
          + HostPaths.reason(e) + ")", e);
    }
  }

  private void cleanUp(String id, UUID tenantId, String containerId, Path runDir, RuntimeException cause) {
    try {
      if (containerId != null) {
        removeContainer(containerId);
      }
      deleteRunDir(runDir);
      if (views != null) {
        views.remove(id);
      }
    } catch (RuntimeException e) {
      // The reaper gets what this could not remove; the launch failure is what the caller needs.
      cause.addSuppressed(e);
    } finally {
      if (live.remove(id)) {
        cgroups.left(tenantId);
      }
    }
  }

  static ContainerException map(String what, RuntimeException e) {
    if (e instanceof ContainerException ce) {
      return ce;
    }
    // The engine's words may name host paths (a bind source, its data root): not for the client.
    String detail = what + ": " + HostPaths.redact(e.getMessage());
    if (e instanceof NotFoundException) {
      return new ContainerException(Reason.NOT_FOUND, detail, e);
    }
    if (e instanceof ConflictException) {
      return new ContainerException(Reason.CONFLICT, detail, e);
    }
    if (e instanceof BadRequestException) {
      return new ContainerException(Reason.REJECTED, detail, e);
    }
    if (e instanceof DockerException) {
      return new ContainerException(Reason.ENGINE_ERROR, detail, e);
    }
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof IOException) {
        return new ContainerException(Reason.ENGINE_UNREACHABLE, what + ": Docker engine unreachable ("
            + HostPaths.reason(t) + ")", e);
      }
    }
    return new ContainerException(Reason.ENGINE_ERROR, detail, e);
  }

  /** A container's state as the engine reports it. */
  public record ContainerState(boolean running, boolean oomKilled, long exitCode) {}

  /** The outcome of {@link #exec}. */
  public record ExecResult(long exitCode, String stdout, String stderr) {}
}
