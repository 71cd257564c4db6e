package dev.quarry.sandbox;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.Container;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removes sandbox containers and run directories that nobody owns any more: those left by a crashed
 * or killed gateway, by a launch whose clean-up failed, or by a create the engine finished after we
 * gave up on it. A sandbox the launcher still has alive is never touched.
 *
 * <p>Runs once at start-up and then every {@link SandboxSettings#reapInterval()}; the Docker calls
 * run on worker threads.
 */
public final class Reaper {
  private static final Logger LOG = LoggerFactory.getLogger(Reaper.class);

  private final DockerClient docker;
  private final ContainerLauncher launcher;
  private final SandboxSettings settings;
  private final AtomicBoolean reaping = new AtomicBoolean();
  private final List<Promise<Integer>> passWaiters = new ArrayList<>();
  private Vertx vertx;
  private long timerId = -1;

  public Reaper(DockerClient docker, ContainerLauncher launcher) {
    this.docker = docker;
    this.launcher = launcher;
    this.settings = launcher.settings();
  }

  /**
   * Reaps once now (every gateway's leftovers when {@link SandboxSettings#reapAllOnStart()}), then
   * this gateway's periodically. The future completes after the first pass, with its count.
   */
  public Future<Integer> start(Vertx vertx) {
    this.vertx = vertx;
    return vertx.executeBlocking(() -> reapOnce(settings.reapAllOnStart()), false)
        .onSuccess(n -> timerId = vertx.setPeriodic(settings.reapInterval().toMillis(), id -> tick()));
  }

  public void stop() {
    if (vertx != null && timerId >= 0) {
      vertx.cancelTimer(timerId);
      timerId = -1;
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
   * Removes leftover sandboxes (blocking). Returns the number of containers removed. One container
   * that cannot be removed is logged and retried on the next pass; it does not stop the others.
   *
   * @param allGateways also other gateways' sandboxes, for a gateway that owns its engine
   */
  public int reapOnce(boolean allGateways) {
    Set<String> live = launcher.liveIds();
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
      if (live.contains(sandboxId)) {
        continue;
      }
      try {
        launcher.removeContainer(c.getId());
        removed++;
      } catch (ContainerException e) {
        LOG.warn("could not remove leftover sandbox container {}: {}", c.getId(), e.getMessage());
      }
    }
    removeOrphanDirs(allGateways, live);
    if (removed > 0) {
      LOG.info("removed {} leftover sandbox container(s)", removed);
    }
    return removed;
  }

  /** Run directories whose sandbox is not alive: their container is gone or just went. */
  private void removeOrphanDirs(boolean allGateways, Set<String> live) {
    List<Path> gatewayDirs = new ArrayList<>();
    if (allGateways) {
      gatewayDirs.addAll(children(settings.runRoot()));
    } else {
      gatewayDirs.add(settings.runRoot().resolve(settings.gatewayId()));
    }
    for (Path gatewayDir : gatewayDirs) {
      for (Path runDir : children(gatewayDir)) {
        if (!live.contains(runDir.getFileName().toString())) {
          try {
            ContainerLauncher.deleteRunDir(runDir);
          } catch (ContainerException e) {
            LOG.warn("could not remove leftover sandbox directory {}: {}", runDir, e.getMessage());
          }
        }
      }
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
