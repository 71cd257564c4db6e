package dev.quarry.sandbox;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.function.ToIntFunction;

/**
 * The most sandbox containers this gateway keeps at once, so that a burst of requests queues (for a
 * bounded time) instead of starting containers until the node runs out of memory.
 *
 * <p>A slot is held for a container's whole life: from before it is launched until it is removed.
 * So every container counts, whether in use, warm in the pool, starting or being removed: the
 * limit is what the node must have room for. The warm pool takes only slots nobody waits for
 * ({@link #tryAcquire}), and gives an idle sandbox back when a request has to wait
 * ({@code onShortage}).
 *
 * <p>A slot released while someone waits goes straight to a waiter: the oldest of those whose
 * tenant holds the fewest sandboxes now, so that a tenant with many sandboxes does not get the next
 * one ahead of a tenant with few (first come, first served among equals).
 */
public final class SandboxCapacity {
  private final Vertx vertx;
  private int limit;
  private final Duration maxWait;
  private final Runnable onShortage;
  private final ToIntFunction<UUID> heldBy;
  private final Deque<Waiter> waiters = new ArrayDeque<>();
  private int used;

  /**
   * @param maxWait    how long {@link #acquire} waits for a slot before it fails
   * @param onShortage called (outside any lock) each time a request starts waiting, so that an idle
   *                   warm sandbox can be removed to make room
   */
  public SandboxCapacity(Vertx vertx, int limit, Duration maxWait, Runnable onShortage) {
    this(vertx, limit, maxWait, onShortage, tenant -> 0);
  }

  /**
   * @param heldBy how many sandboxes a tenant holds now, which orders the waiters a released slot
   *               goes to
   */
  public SandboxCapacity(Vertx vertx, int limit, Duration maxWait, Runnable onShortage, ToIntFunction<UUID> heldBy) {
    if (limit < 1) {
      throw new IllegalArgumentException("sandbox limit " + limit + " must be at least 1");
    }
    this.vertx = vertx;
    this.limit = limit;
    this.maxWait = maxWait;
    this.onShortage = onShortage;
    this.heldBy = heldBy;
  }

  /** One container's place; released once, whatever the path (further releases do nothing). */
  public final class Slot {
    private boolean released;

    public void release() {
      synchronized (SandboxCapacity.this) {
        if (released) {
          return;
        }
        released = true;
      }
      handOver();
    }
  }

  /** A request waiting for a slot, answered on the context it asked from. */
  private record Waiter(UUID tenant, Promise<Slot> promise, Context context, long[] timer) {}

  /** A slot now when one is free, else the oldest waiter's turn, or a failure after the wait. */
  public Future<Slot> acquire() {
    return acquire(null, null);
  }

  public Future<Slot> acquire(Future<?> abandoned) {
    return acquire(null, abandoned);
  }

  /**
   * As {@link #acquire()}, for a request that may be abandoned while it waits (an analysis
   * cancelled): once {@code abandoned} completes, a request still waiting leaves the queue at once
   * and fails with {@link CancellationException}; no slot is held or handed to it. A request that
   * already has its slot is not affected. {@code null}: never abandoned.
   */
  public Future<Slot> acquire(UUID tenant, Future<?> abandoned) {
    Waiter waiter;
    synchronized (this) {
      if (used < limit && waiters.isEmpty()) {
        used++;
        return Future.succeededFuture(new Slot());
      }
      waiter = new Waiter(tenant, Promise.promise(), vertx.getOrCreateContext(), new long[1]);
      waiters.addLast(waiter);
      // Set under the lock, so a hand-over never sees the waiter without its timer.
      waiter.timer()[0] = vertx.setTimer(Math.max(1, maxWait.toMillis()), id -> timedOut(waiter));
    }
    if (abandoned != null) {
      abandoned.onComplete(x -> abandon(waiter));
    }
    onShortage.run();
    return waiter.promise().future();
  }

  private void abandon(Waiter waiter) {
    synchronized (this) {
      if (!waiters.remove(waiter)) {
        return; // served or timed out already
      }
    }
    vertx.cancelTimer(waiter.timer()[0]);
    waiter.promise().tryFail(
        new CancellationException("the request was abandoned while it waited for a sandbox"));
  }

  /** A slot only if one is free and nobody waits: for work that may as well not happen (warming). */
  public synchronized Slot tryAcquire() {
    if (used < limit && waiters.isEmpty()) {
      used++;
      return new Slot();
    }
    return null;
  }

  /** A slot came free: to the next waiter ({@link #next}), else back to the free ones. */
  private void handOver() {
    Waiter next;
    synchronized (this) {
      // Over a lowered limit, a slot that comes free is not handed on.
      next = used > limit ? null : next();
      if (next == null) {
        used--;
        return;
      }
      waiters.remove(next);
    }
    vertx.cancelTimer(next.timer()[0]);
    Slot slot = new Slot();
    // Releases come from worker threads (container removal); the waiter carries on where it asked.
    next.context().runOnContext(v -> next.promise().complete(slot));
  }

  /** The oldest waiter of the tenants that hold the fewest sandboxes. */
  private Waiter next() {
    Waiter best = null;
    int fewest = Integer.MAX_VALUE;
    for (Waiter w : waiters) {
      int held = w.tenant() == null ? 0 : heldBy.applyAsInt(w.tenant());
      if (held < fewest) {
        best = w;
        fewest = held;
      }
    }
    return best;
  }

  private void timedOut(Waiter waiter) {
    synchronized (this) {
      if (!waiters.remove(waiter)) {
        return;
      }
    }
    waiter.promise().fail(new SandboxCapacityExhausted(limit(), maxWait.toMillis(), retryAfterSeconds()));
  }

  /** Fails everyone waiting (shutdown): no slot will come. */
  public void failWaiters(Throwable cause) {
    java.util.List<Waiter> all;
    synchronized (this) {
      all = java.util.List.copyOf(waiters);
      waiters.clear();
    }
    for (Waiter w : all) {
      vertx.cancelTimer(w.timer()[0]);
      w.context().runOnContext(v -> w.promise().tryFail(cause));
    }
  }

  /** What a refused caller is told to wait: the wait it already had, at least a second. */
  long retryAfterSeconds() {
    return Math.max(1, (maxWait.toMillis() + 999) / 1000);
  }

  public synchronized int limit() {
    return limit;
  }

  /**
   * Keeps fewer containers from now on (the engine has fewer CPUs than the limit asks); those
   * already there stay until they go. Never raises the limit.
   */
  public synchronized void lowerTo(int newLimit) {
    if (newLimit < 1) {
      throw new IllegalArgumentException("sandbox limit " + newLimit + " must be at least 1");
    }
    limit = Math.min(limit, newLimit);
  }

  /** Slots held now: containers starting, warm, in use or being removed. */
  public synchronized int used() {
    return used;
  }

  /** Requests waiting for a slot now. */
  public synchronized int waiting() {
    return waiters.size();
  }
}
