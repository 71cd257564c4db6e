package dev.quarry.search;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.Queue;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * At most {@code perTenant} of one tenant's pieces of work (its searches, its ingests) run at once;
 * the tenant's others wait in a line of its own, in order, and start as its running ones end. What
 * the work shares (the event loops' CPU, the ingest workers' queue) therefore never holds more than
 * {@code perTenant} of any one tenant's, and another tenant's work does not wait behind a long line.
 * How long a line may grow is bounded by the tenant's quotas, checked before its work is asked for
 * ({@code requests_per_minute} and {@code callbacks_per_minute} for searches, {@code
 * concurrent_ingests} for ingests). Safe from any thread.
 */
public final class TenantLines {
  private final int perTenant;
  private final Map<UUID, Line> lines = new HashMap<>();

  private static final class Line {
    int running;
    final Queue<Runnable> waiting = new ArrayDeque<>();
  }

  public TenantLines(int perTenant) {
    if (perTenant < 1) {
      throw new IllegalArgumentException("perTenant must be at least 1, got " + perTenant);
    }
    this.perTenant = perTenant;
  }

  /** Runs {@code work} now if the tenant has a free turn, else once one frees; completes as it does. */
  public <T> Future<T> run(UUID tenant, Supplier<Future<T>> work) {
    Promise<T> done = Promise.promise();
    Runnable start = () -> {
      Future<T> running;
      try {
        running = work.get();
      } catch (RuntimeException e) {
        running = Future.failedFuture(e);
      }
      running.onComplete(result -> {
        next(tenant);
        done.handle(result);
      });
    };
    boolean now;
    synchronized (this) {
      Line line = lines.computeIfAbsent(tenant, t -> new Line());
      now = line.running < perTenant;
      if (now) {
        line.running++;
      } else {
        line.waiting.add(start);
      }
    }
    if (now) {
      start.run();
    }
    return done.future();
  }

  /** One of the tenant's pieces of work ended: its turn goes to the next in its line. */
  private void next(UUID tenant) {
    Runnable start;
    synchronized (this) {
      Line line = lines.get(tenant);
      start = line.waiting.poll();
      if (start == null && --line.running == 0) {
        lines.remove(tenant);
      }
    }
    if (start != null) {
      start.run();
    }
  }
}
