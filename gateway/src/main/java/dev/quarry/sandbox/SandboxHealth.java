package dev.quarry.sandbox;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.PullImageCmd;
import com.github.dockerjava.api.command.PullImageResultCallback;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.AuthConfig;
import dev.quarry.telemetry.QuarryMetrics;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether this gateway can start a sandbox, as {@code /readyz} asks it ({@code sandboxes}): the
 * sandbox image is in the engine now, and a sandbox has started from that image since it came (a
 * probe sandbox, started as any request's and removed). Until both hold the gateway is unready and
 * says why.
 *
 * <p>An engine that lacks the image pulls it from the registry the image's name holds, with the
 * credentials of {@link ImagePull}: each pull is limited to its timeout, a failed one is tried again
 * after 5 s, then twice as long each time up to 2 minutes, and each is logged and counted
 * ({@code quarry_sandbox_image_pulls_total}, {@code quarry_sandbox_image_pull_duration_seconds}).
 * A Kubernetes pod's engine starts empty, so this is how the image gets there.
 *
 * <p>It stops holding when the image leaves the engine (found at the next readiness probe, which
 * pulls it again), when the engine's image is another one (a new probe), or when a request's
 * sandbox fails to start in the engine ({@link #sandboxFailed}: a new probe, unready until it
 * succeeds).
 */
public final class SandboxHealth {
  private static final Logger LOG = LoggerFactory.getLogger(SandboxHealth.class);
  static final Duration FIRST_RETRY = Duration.ofSeconds(5);
  static final Duration MAX_RETRY = Duration.ofMinutes(2);

  private final Vertx vertx;
  private final DockerClient docker;
  private final SandboxSettings settings;
  private final QuarryMetrics metrics;
  private final Supplier<Future<Duration>> probe;
  /** A round (pull if need be, then probe) is under way; only one at a time. */
  private final AtomicBoolean working = new AtomicBoolean();
  private volatile boolean started;
  private volatile boolean closed;
  /** The image id a probe sandbox last started from; null until one has, and after a failed start. */
  private volatile String proven;
  private volatile Duration provenIn;
  /** Why the last round failed; null after one that succeeded. */
  private volatile String problem = "not checked yet";
  /** While a pull runs: since when (System.nanoTime). */
  private volatile long pullingSince = -1;
  private volatile int failures;
  private volatile long retryAt;
  private volatile long retryTimer = -1;

  SandboxHealth(Vertx vertx, DockerClient docker, SandboxSettings settings, QuarryMetrics metrics,
      Supplier<Future<Duration>> probe) {
    this.vertx = vertx;
    this.docker = docker;
    this.settings = settings;
    this.metrics = metrics;
    this.probe = probe;
  }

  /**
   * Starts watching. When the engine has the image already, completes after the first probe
   * (whether it succeeded or not: the readiness check tells), so that a gateway that can start
   * sandboxes is ready as soon as it serves; otherwise at once, the pull going on in the background
   * (it may take minutes, and the gateway serves its probes meanwhile).
   */
  public Future<Void> start() {
    started = true;
    return vertx.executeBlocking(this::imageId, false)
        .transform(present -> {
          Future<Void> round = round();
          return present.succeeded() && present.result() != null ? round : Future.succeededFuture();
        });
  }

  /** The readiness check: succeeds with what was proven, or fails saying what is missing. */
  public Future<String> check() {
    return vertx.executeBlocking(this::imageId, false).compose(id -> {
      String proof = proven;
      if (id != null && id.equals(proof)) {
        return Future.succeededFuture("image " + settings.image() + " (" + shortId(id) + "); a probe sandbox started in "
            + seconds(provenIn));
      }
      if (started && !working.get() && System.nanoTime() - retryAt >= 0) {
        round();
      }
      return Future.failedFuture(new IllegalStateException(reason(id)));
    });
  }

  private String reason(String id) {
    String image = settings.image();
    long since = pullingSince;
    if (id == null && since >= 0) {
      return "sandbox image " + image + " is not in the Docker engine: pulling it from " + ImagePull.registry(image)
          + " (attempt " + (failures + 1) + ", for " + seconds(Duration.ofNanos(System.nanoTime() - since)) + ")";
    }
    String last = problem;
    if (last != null && !working.get()) {
      long wait = Math.max(0, retryAt - System.nanoTime());
      return last + "; next attempt in " + seconds(Duration.ofNanos(wait));
    }
    if (id == null) {
      return "sandbox image " + image + " is not in the Docker engine";
    }
    return (last == null ? "" : last + "; ") + "sandbox image " + image + " (" + shortId(id)
        + ") is in the Docker engine; a probe sandbox is starting";
  }

  /**
   * A request's sandbox could not be had. A failure of the engine or the runner (not a full gateway,
   * a quota or a request given up) means sandboxes may not start any more: unready until a probe
   * sandbox starts again.
   */
  void sandboxFailed(Throwable e) {
    if (!(e instanceof ContainerException c) || !started || closed) {
      return;
    }
    proven = null;
    problem = "a sandbox failed to start: " + firstLine(c.getMessage());
    round();
  }

  /** Stops the retries; a round under way ends with the engine's client. */
  public void close() {
    closed = true;
    long t = retryTimer;
    if (t >= 0) {
      vertx.cancelTimer(t);
    }
  }

  /** Pulls the image when the engine lacks it, then probes it unless a probe already started from it. */
  private Future<Void> round() {
    if (closed || !working.compareAndSet(false, true)) {
      return Future.succeededFuture();
    }
    return vertx.executeBlocking(() -> {
      String id = imageId();
      if (id == null) {
        pull();
        id = imageId();
        if (id == null) {
          throw new IllegalStateException("sandbox image " + settings.image() + " was pulled, yet the engine does not have it");
        }
      }
      return id;
    }, false).compose(id -> {
      if (id.equals(proven)) {
        return Future.succeededFuture();
      }
      return probe.get().transform(ar -> {
        if (ar.failed()) {
          String why = ar.cause() instanceof SandboxCapacityExhausted
              ? "no free sandbox slot for a probe sandbox (QUARRY_SANDBOX_MAX_ACTIVE all in use)"
              : firstLine(ar.cause().getMessage());
          return Future.failedFuture(new IllegalStateException("sandbox image " + settings.image()
              + " is in the Docker engine, but a probe sandbox did not start: " + why, ar.cause()));
        }
        if (proven == null || !proven.equals(id)) {
          LOG.info("a probe sandbox of {} ({}) started in {}: sandboxes can start", settings.image(), shortId(id),
              seconds(ar.result()));
        }
        provenIn = ar.result();
        proven = id;
        return Future.<Void>succeededFuture();
      });
    }).transform(ar -> {
      working.set(false);
      if (ar.succeeded()) {
        failures = 0;
        problem = null;
      } else {
        failures++;
        problem = firstLine(ar.cause().getMessage());
        Duration backoff = backoff(failures);
        retryAt = System.nanoTime() + backoff.toNanos();
        LOG.warn("{} (attempt {}); trying again in {}", problem, failures, seconds(backoff));
        if (!closed) {
          retryTimer = vertx.setTimer(backoff.toMillis(), t -> round());
        }
      }
      return Future.succeededFuture();
    });
  }

  /** 5 s, then twice as long after each failure in a row, at most {@link #MAX_RETRY}. */
  static Duration backoff(int failures) {
    long seconds = FIRST_RETRY.toSeconds() << Math.min(failures - 1, 10);
    return Duration.ofSeconds(Math.min(seconds, MAX_RETRY.toSeconds()));
  }

  /** The id of the engine's image of that name, or null when the engine has none (blocking). */
  private String imageId() {
    try {
      return docker.inspectImageCmd(settings.image()).exec().getId();
    } catch (NotFoundException e) {
      return null;
    } catch (RuntimeException e) {
      throw ContainerLauncher.map("inspect sandbox image " + settings.image(), e);
    }
  }

  /** One pull of the image, within its timeout (blocking); logged and counted whatever its outcome. */
  private void pull() {
    String image = settings.image();
    String registry = ImagePull.registry(image);
    ImagePull how = settings.pull();
    long start = System.nanoTime();
    pullingSince = start;
    LOG.info("sandbox image {} is not in the Docker engine: pulling it from {} {}", image, registry, how.describe());
    try {
      AuthConfig auth = how.auth(image);
      String[] repoTag = repositoryAndTag(image);
      PullImageCmd cmd = docker.pullImageCmd(repoTag[0]).withTag(repoTag[1]);
      if (auth != null) {
        cmd.withAuthConfig(auth);
      }
      PullImageResultCallback callback = cmd.exec(new PullImageResultCallback());
      boolean done = false;
      try {
        done = callback.awaitCompletion(how.timeout().toMillis(), TimeUnit.MILLISECONDS);
      } finally {
        if (!done) {
          callback.close();
        }
      }
      if (!done) {
        throw new TimeoutException("not done within " + seconds(how.timeout()) + " (QUARRY_SANDBOX_PULL_TIMEOUT_SECONDS)");
      }
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      metrics.sandboxImagePull(true, took);
      LOG.info("pulled sandbox image {} from {} in {}", image, registry, seconds(took));
    } catch (Exception e) {
      metrics.sandboxImagePull(false, Duration.ofNanos(System.nanoTime() - start));
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new ContainerException(ContainerException.Reason.IMAGE_MISSING, "sandbox image " + image
          + " is not in the Docker engine, and pulling it from " + registry + " " + how.describe() + " failed: "
          + firstLine(String.valueOf(e.getMessage())), e);
    } finally {
      pullingSince = -1;
    }
  }

  /**
   * The engine's pull takes a repository and a tag apart: {@code host:5000/a/b:1.0} is
   * {@code host:5000/a/b} and {@code 1.0}, a digest ({@code a/b@sha256:…}) goes as the tag, and no
   * tag is {@code latest}, as Docker reads a name.
   */
  static String[] repositoryAndTag(String image) {
    int at = image.indexOf('@');
    if (at >= 0) {
      return new String[] {image.substring(0, at), image.substring(at + 1)};
    }
    int colon = image.lastIndexOf(':');
    if (colon > image.lastIndexOf('/')) {
      return new String[] {image.substring(0, colon), image.substring(colon + 1)};
    }
    return new String[] {image, "latest"};
  }

  private static String shortId(String id) {
    String hex = id.startsWith("sha256:") ? id.substring(7) : id;
    return "sha256:" + hex.substring(0, Math.min(12, hex.length()));
  }

  private static String seconds(Duration d) {
    return d == null ? "?" : String.format(java.util.Locale.ROOT, "%.1f s", d.toMillis() / 1000.0);
  }

  private static String firstLine(String s) {
    if (s == null) {
      return "unknown error";
    }
    return s.lines().findFirst().orElse(s).strip();
  }
}
