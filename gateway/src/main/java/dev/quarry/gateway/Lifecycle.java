package dev.quarry.gateway;

import dev.quarry.api.ApiError;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway's shutdown sequence, and the hooks long-running work plugs into.
 *
 * <p>Work that outlives a request (an analysis, an execution session) calls {@link #begin} when it
 * starts and closes the returned {@link Work} when it ends, however it ends. On SIGTERM,
 * {@link #drain} makes the gateway unready and refuses new work (503), lets running work finish
 * within the grace period, then cancels what is left through each work's cancel callback (which
 * records the cancelled status), waits a little for those to close, and finally runs the shutdown
 * cleanups (removing every sandbox) in the order they were added.
 */
public final class Lifecycle {
  private static final Logger log = LoggerFactory.getLogger(Lifecycle.class);

  /** How long cancelled work gets to record its status and close after the grace period. */
  static final Duration CANCEL_WAIT = Duration.ofSeconds(10);

  /** How long one shutdown step may take before the next one runs regardless. */
  static final Duration CLEANUP_WAIT = Duration.ofSeconds(10);

  public enum State { SERVING, DRAINING, STOPPED }

  private record Cleanup(String name, Supplier<Future<?>> action) {}

  private final Vertx vertx;
  private final Set<Work> running = ConcurrentHashMap.newKeySet();
  private final List<Cleanup> cleanups = new CopyOnWriteArrayList<>();
  private volatile State state = State.SERVING;
  private volatile Promise<Void> idle;
  private Future<Void> drained;
  private final List<Runnable> onDrain = new java.util.concurrent.CopyOnWriteArrayList<>();

  public Lifecycle(Vertx vertx) {
    this.vertx = vertx;
  }

  public State state() {
    return state;
  }

  public boolean accepting() {
    return state == State.SERVING;
  }

  public int running() {
    return running.size();
  }

  /**
   * Registers new work, or fails with a 503 {@code shutting_down} once the gateway drains.
   *
   * @param kind   what it is ("analysis", "execution"), for the log
   * @param cancel called at most once, on a worker-free path, when the grace period is over: it must
   *               stop the work, record its status as cancelled, and eventually close the Work
   */
  public Work begin(String kind, Consumer<String> cancel) {
    Work work = new Work(kind, cancel);
    running.add(work);
    // Checked after adding, so a drain that starts in between either sees this work or refuses it.
    if (state != State.SERVING) {
      running.remove(work);
      throw new ApiError(503, "shutting_down",
          "this gateway is shutting down and takes no new " + kind + "; retry, another replica will take it");
    }
    return work;
  }

  /** Something to do as soon as a drain begins (before running work is waited for). */
  public void onDrain(Runnable action) {
    onDrain.add(action);
  }

  /** Adds a step of the final cleanup (e.g. "remove every sandbox"); cleanups run in order. */
  public void onShutdown(String name, Supplier<Future<?>> action) {
    cleanups.add(new Cleanup(name, action));
  }

  /**
   * Drains: unready, no new work, running work finishes within {@code grace} or is cancelled, then
   * the cleanups run. Completes (never fails) when all that is done; calling it again returns the
   * same future.
   */
  public synchronized Future<Void> drain(Duration grace) {
    if (drained != null) {
      return drained;
    }
    state = State.DRAINING;
    log.info("draining: {} running, grace {} s", running.size(), grace.toSeconds());
    for (Runnable action : onDrain) {
      try {
        action.run();
      } catch (RuntimeException e) {
        log.warn("at the drain's start: {}", e.toString());
      }
    }
    drained = awaitIdle(grace)
        .compose(finished -> {
          if (finished) {
            return Future.succeededFuture();
          }
          List<Work> left = new ArrayList<>(running);
          log.warn("grace period over: cancelling {} running", left.size());
          left.forEach(w -> w.cancel("the gateway shut down before it finished"));
          return awaitIdle(CANCEL_WAIT).map(done -> {
            if (!done) {
              log.error("{} work items did not close after cancellation", running.size());
            }
            return null;
          });
        })
        .compose(v -> runCleanups())
        .onComplete(v -> state = State.STOPPED);
    return drained;
  }

  /** True when no work is running (now or within the time), false at the timeout. */
  private Future<Boolean> awaitIdle(Duration within) {
    Promise<Void> p = Promise.promise();
    idle = p;
    if (running.isEmpty()) {
      p.tryComplete();
    }
    long timer = vertx.setTimer(Math.max(1, within.toMillis()), t -> p.tryFail("timeout"));
    return p.future().transform(ar -> {
      vertx.cancelTimer(timer);
      return Future.succeededFuture(ar.succeeded());
    });
  }

  private Future<Void> runCleanups() {
    Future<?> chain = Future.succeededFuture();
    for (Cleanup c : cleanups) {
      chain = chain.transform(ignored -> {
        Future<?> step;
        try {
          step = c.action().get();
        } catch (RuntimeException e) {
          step = Future.failedFuture(e);
        }
        // Bounded: a step that never finishes must not keep the sandboxes' removal, which follows
        // the drain, from running.
        return step.timeout(CLEANUP_WAIT.toMillis(), TimeUnit.MILLISECONDS)
            .onFailure(e -> log.error("shutdown step '{}' failed", c.name(), e))
            .otherwiseEmpty();
      });
    }
    return chain.mapEmpty();
  }

  /** One piece of running work; close it exactly when the work has ended. */
  public final class Work implements AutoCloseable {
    private final String kind;
    private final Consumer<String> cancel;
    private boolean cancelled;

    private Work(String kind, Consumer<String> cancel) {
      this.kind = kind;
      this.cancel = cancel;
    }

    public String kind() {
      return kind;
    }

    private synchronized void cancel(String reason) {
      if (!cancelled) {
        cancelled = true;
        try {
          cancel.accept(reason);
        } catch (RuntimeException e) {
          log.error("cancelling a running {} failed", kind, e);
        }
      }
    }

    @Override
    public void close() {
      if (running.remove(this) && running.isEmpty()) {
        Promise<Void> p = idle;
        if (p != null) {
          p.tryComplete();
        }
      }
    }
  }
}
