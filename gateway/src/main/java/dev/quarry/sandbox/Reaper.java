package dev.quarry.sandbox;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.Container;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removes sandbox containers, run directories and scoped views that nobody owns any more: those left by a crashed
 * or killed gateway, by a launch whose clean-up failed, or by a create the engine finished after we
 * gave up on it. A sandbox the launcher still has alive is never touched.
 *
 * <p>Runs once at start-up and then every {@link SandboxSettings#reapInterval()}; the Docker calls
 * run on worker threads. Each pass also removes, safely beside other live gateways on the same engine:
 * <ul>
 *   <li>every sandbox and run directory of a gateway that is gone: one whose {@link GatewayLease}
 *       in the shared run root is no longer held (its process ended, even by SIGKILL);</li>
 *   <li>any gateway's sandbox container that exited more than {@link #EXITED_GRACE} ago (a live
 *       gateway removes its own within seconds), with its run directory when it is in this run root.</li>
 * </ul>
 * Running sandboxes of a gateway on another host (a run root not shared) are left to their own
 * gateway; their runners exit by themselves when that gateway's stream ends.
 */
public final class Reaper {
  private static final Logger LOG = LoggerFactory.getLogger(Reaper.class);

  /** How long an exited sandbox container of another gateway is left to it before any gateway removes it. */
  static final Duration EXITED_GRACE = Duration.ofMinutes(10);
  /** A lease file newer than this may be one a starting gateway has made and not locked yet. */
  static final Duration LEASE_GRACE = Duration.ofSeconds(10);
  /** How long start-up waits for this gateway's lease (held a moment by another gateway's reaper). */
  private static final Duration LEASE_WAIT = Duration.ofSeconds(30);
  private static final java.util.regex.Pattern SAFE_NAME = java.util.regex.Pattern.compile("[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}");

  private final DockerClient docker;
  private final ContainerLauncher launcher;
  private final SandboxSettings settings;
  private final Duration exitedGrace;
  private final Duration leaseGrace;
  private final Map<String, String> exitedScope;
  private GatewayLease lease;
  private final AtomicBoolean reaping = new AtomicBoolean();
  private final List<Promise<Integer>> passWaiters = new ArrayList<>();
  private Vertx vertx;
  private long timerId = -1;

  public Reaper(DockerClient docker, ContainerLauncher launcher) {
    this(docker, launcher, EXITED_GRACE, LEASE_GRACE, Map.of(ContainerLauncher.LABEL_SANDBOX, "1"));
  }

  /**
   * With other graces (tests), and the labels of the exited containers it may judge (tests on a
   * shared engine keep to their own).
   */
  Reaper(DockerClient docker, ContainerLauncher launcher, Duration exitedGrace, Duration leaseGrace,
      Map<String, String> exitedScope) {
    this.exitedScope = Map.copyOf(exitedScope);
    this.docker = docker;
    this.launcher = launcher;
    this.settings = launcher.settings();
    this.exitedGrace = exitedGrace;
    this.leaseGrace = leaseGrace;
  }

  /**
   * Reaps once now (every gateway's leftovers when {@link SandboxSettings#reapAllOnStart()}), then
   * this gateway's periodically. The future completes after the first pass, with its count.
   */
  public Future<Integer> start(Vertx vertx) {
    this.vertx = vertx;
    return vertx.executeBlocking(() -> {
          // Before any sandbox of this gateway exists: from now on the others can tell it is alive.
          synchronized (this) {
            if (lease == null) {
              lease = GatewayLease.acquire(settings.runRoot(), settings.gatewayId(), LEASE_WAIT);
            }
          }
          return reapOnce(settings.reapAllOnStart());
        }, false)
        .onSuccess(n -> timerId = vertx.setPeriodic(settings.reapInterval().toMillis(), id -> tick()));
  }

  public void stop() {
    if (vertx != null && timerId >= 0) {
      vertx.cancelTimer(timerId);
      timerId = -1;
    }
  }

  /**
   * Stops and gives this gateway's lease up: once its sandboxes are removed (a gateway that ends
   * without this, however it ends, has its lease freed by the kernel).
   */
  public void close() {
    stop();
    GatewayLease l;
    synchronized (this) {
      l = lease;
      lease = null;
    }
    if (l != null) {
      l.release();
    }
  }

  private void tick() {
    // A slow engine must not pile passes on top of each other.
    if (!reaping.compareAndSet(false, true)) {
      return;
    }
    List<Promise<Integer>> waiters;
    synchronized (passWaiters) {
      waiters = List.copyOf(passWaiters);
      passWaiters.clear();
    }
    vertx.executeBlocking(() -> reapOnce(false), false)
        .onComplete(ar -> {
          reaping.set(false);
          if (ar.succeeded()) {
            waiters.forEach(p -> p.tryComplete(ar.result()));
          } else {
            waiters.forEach(p -> p.tryFail(ar.cause()));
            LOG.warn("sandbox reaper pass failed: {}", ar.cause().getMessage());
          }
        });
  }

  /** Completes after the next periodic pass that starts from now, with the number it removed. */
  public Future<Integer> nextPass() {
    Promise<Integer> p = Promise.promise();
    synchronized (passWaiters) {
      passWaiters.add(p);
    }
    return p.future();
  }

  /**
   * Removes leftover sandboxes (blocking). Returns the number of containers of this gateway (of every
   * gateway with {@code allGateways}) and of gone gateways removed; long-exited ones are only logged. One container
   * that cannot be removed is logged and retried on the next pass; it does not stop the others.
   *
   * @param allGateways also other gateways' sandboxes, for a gateway that owns its engine
   */
  public int reapOnce(boolean allGateways) {
    Map<String, String> filter = allGateways
        ? Map.of(ContainerLauncher.LABEL_SANDBOX, "1")
        : Map.of(ContainerLauncher.LABEL_SANDBOX, "1", ContainerLauncher.LABEL_GATEWAY, settings.gatewayId());
    List<Container> found;
    try {
      found = docker.listContainersCmd().withShowAll(true).withLabelFilter(filter).exec();
    } catch (RuntimeException e) {
      throw ContainerLauncher.map("list sandbox containers", e);
    }
    int removed = 0;
    for (Container c : found) {
      Map<String, String> labels = c.getLabels() == null ? Map.of() : c.getLabels();
      String sandboxId = labels.getOrDefault(ContainerLauncher.LABEL_SANDBOX_ID, "");
      // Asked now, not before the listing: a sandbox reserved since has its container listed too.
      if (launcher.isLive(sandboxId)) {
        continue;
      }
      try {
        launcher.removeContainer(c.getId());
        removed++;
      } catch (ContainerException e) {
        LOG.warn("could not remove leftover sandbox container {}: {}", c.getId(), e.getMessage());
      }
    }
    removeOrphanDirs(allGateways);
    if (removed > 0) {
      LOG.info("removed {} leftover sandbox container(s)", removed);
    }
    removed += reapGoneGateways();
    reapLongExited(); // logged, not counted: on a shared engine, how many there are is anyone's
    return removed;
  }

  /** Every sandbox and run directory of the gateways whose lease in this run root is free. */
  private int reapGoneGateways() {
    List<Path> leases;
    try (Stream<Path> s = Files.list(settings.runRoot())) {
      leases = s.filter(p -> p.getFileName().toString().endsWith(GatewayLease.SUFFIX) && Files.isRegularFile(p))
          .toList();
    } catch (IOException e) {
      if (Files.isDirectory(settings.runRoot())) {
        LOG.warn("cannot list {}: {}", settings.runRoot(), e.getMessage());
      }
      return 0;
    }
    int removed = 0;
    for (Path leaseFile : leases) {
      String name = leaseFile.getFileName().toString();
      String gatewayId = name.substring(0, name.length() - GatewayLease.SUFFIX.length());
      if (gatewayId.equals(settings.gatewayId()) || !SAFE_NAME.matcher(gatewayId).matches()) {
        continue;
      }
      int[] count = {0};
      boolean gone;
      try {
        gone = GatewayLease.ifGone(leaseFile, leaseGrace, () -> count[0] = removeGateway(gatewayId));
      } catch (RuntimeException e) {
        // Something could not be removed: the lease stays, and the next pass tries again.
        LOG.warn("could not reap the sandboxes of gone gateway {}: {}", gatewayId, e.getMessage());
        continue;
      }
      if (gone) {
        LOG.info("gateway {} is gone (its lease is free): removed {} of its sandbox container(s) and its run"
            + " directories", gatewayId, count[0]);
        removed += count[0];
      }
    }
    return removed;
  }

  /**
   * Every container and run directory of a gateway that is gone (its lease held by this pass);
   * fails, after trying them all, when one of them could not be removed.
   */
  private int removeGateway(String gatewayId) {
    List<Container> found;
    try {
      found = docker.listContainersCmd().withShowAll(true).withLabelFilter(
          Map.of(ContainerLauncher.LABEL_SANDBOX, "1", ContainerLauncher.LABEL_GATEWAY, gatewayId)).exec();
    } catch (RuntimeException e) {
      throw ContainerLauncher.map("list the sandbox containers of gateway " + gatewayId, e);
    }
    int removed = 0;
    ContainerException failed = null;
    for (Container c : found) {
      try {
        launcher.removeContainer(c.getId());
        removed++;
      } catch (ContainerException e) {
        failed = e;
      }
    }
    Path gatewayDir = settings.runRoot().resolve(gatewayId);
    for (Path runDir : children(gatewayDir)) {
      try {
        ContainerLauncher.deleteRunDir(runDir);
      } catch (ContainerException e) {
        failed = e;
      }
    }
    if (launcher.views() != null) {
      try {
        launcher.views().removeGateway(gatewayId);
      } catch (ContainerException e) {
        failed = e;
      }
    }
    if (failed != null) {
      throw failed;
    }
    try {
      Files.deleteIfExists(gatewayDir);
    } catch (IOException e) {
      LOG.warn("could not remove {}: {}", gatewayDir, e.getMessage());
    }
    return removed;
  }

  /** Other gateways' sandbox containers that exited long ago (their gateway lost them), with their run dirs. */
  private int reapLongExited() {
    List<Container> exited;
    try {
      exited = docker.listContainersCmd().withShowAll(true).withStatusFilter(List.of("exited", "dead"))
          .withLabelFilter(exitedScope).exec();
    } catch (RuntimeException e) {
      throw ContainerLauncher.map("list exited sandbox containers", e);
    }
    Instant before = Instant.now().minus(exitedGrace);
    int removed = 0;
    for (Container c : exited) {
      Map<String, String> labels = c.getLabels() == null ? Map.of() : c.getLabels();
      String gatewayId = labels.getOrDefault(ContainerLauncher.LABEL_GATEWAY, "");
      String sandboxId = labels.getOrDefault(ContainerLauncher.LABEL_SANDBOX_ID, "");
      if (gatewayId.equals(settings.gatewayId())) {
        continue; // this gateway's own: removed above unless alive
      }
      Instant finished;
      try {
        finished = Instant.parse(docker.inspectContainerCmd(c.getId()).exec().getState().getFinishedAt());
      } catch (RuntimeException e) {
        continue; // gone meanwhile, or no time to judge by
      }
      if (finished.isAfter(before)) {
        continue;
      }
      try {
        launcher.removeContainer(c.getId());
        removed++;
        LOG.info("removed sandbox container {} of gateway {}: it exited at {}, more than {} s ago", c.getId(),
            gatewayId, finished, exitedGrace.toSeconds());
        if (SAFE_NAME.matcher(gatewayId).matches() && SAFE_NAME.matcher(sandboxId).matches()) {
          ContainerLauncher.deleteRunDir(settings.runRoot().resolve(gatewayId).resolve(sandboxId));
          if (launcher.views() != null) {
            launcher.views().remove(gatewayId, sandboxId);
          }
        }
      } catch (ContainerException e) {
        LOG.warn("could not remove exited sandbox container {}: {}", c.getId(), e.getMessage());
      }
    }
    return removed;
  }

  /**
   * Run directories and scoped views whose sandbox is not alive: their container is gone or just
   * went. Each is judged by whether its sandbox is alive at that moment, not by the pass's first
   * look: a sandbox reserved since then has its directories made after that look.
   */
  private void removeOrphanDirs(boolean allGateways) {
    List<Path> gatewayDirs = new ArrayList<>();
    if (allGateways) {
      gatewayDirs.addAll(children(settings.runRoot()));
    } else {
      gatewayDirs.add(settings.runRoot().resolve(settings.gatewayId()));
    }
    for (Path gatewayDir : gatewayDirs) {
      for (Path runDir : children(gatewayDir)) {
        if (!launcher.isLive(runDir.getFileName().toString())) {
          try {
            ContainerLauncher.deleteRunDir(runDir);
          } catch (ContainerException e) {
            LOG.warn("could not remove leftover sandbox directory {}: {}", runDir, e.getMessage());
          }
        }
      }
    }
    if (launcher.views() != null) {
      launcher.views().removeOrphans(allGateways, launcher::isLive);
    }
  }

  private static List<Path> children(Path dir) {
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(Files::isDirectory).toList();
    } catch (IOException e) {
      LOG.warn("cannot list {}: {}", dir, e.getMessage());
      return List.of();
    }
  }
}
