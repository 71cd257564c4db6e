package dev.quarry.tenancy;

import dev.quarry.config.Quota;
import dev.quarry.store.Database;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntSupplier;

/**
 * Every rate quota of every tenant (requests per minute, and any other per-minute quota), counted
 * across the replicas: one token bucket per tenant and quota in PostgreSQL ({@code rate_buckets},
 * V18), from which each replica takes tokens a small batch at a time and spends them locally. A
 * request costs a database round trip only when its replica's batch is spent (decision record 0070).
 *
 * <p>What this promises. The cluster admits no more than the bucket allows: a token is taken from
 * the shared bucket before any replica spends it. It may admit less, by the tokens that sit unspent
 * in the replicas' batches: a batch is at most a {@value #BATCH_DIVISOR}th of the limit shared out
 * over the live replicas, so at most 5% of a minute's worth in all. When the shared bucket is found
 * empty, the replica refuses locally, without asking again, until a batch's worth has had time to
 * come back: a flood of refused requests costs the database nothing more.
 *
 * <p>Concurrent requests that find their replica's batch spent wait for one grant between them, sized
 * to serve them all and leave a batch, so a burst is neither refused for want of a local token nor
 * turned into a burst of queries.
 */
public final class RateLimits {
  /** At most this share of a limit (1/20: 5%) sits unspent in the replicas' batches. */
  static final int BATCH_DIVISOR = 20;
  /** Requests of one tenant and quota waiting for a grant on one replica, at most; more are refused. */
  static final int MAX_WAITING = 4096;
  private static final String TAKE = "SELECT granted, left_over FROM take_rate_tokens($1, $2, $3, $4)";

  private final Pool pool;
  private final IntSupplier liveReplicas;
  private final Clock clock;
  private final Map<Key, Pocket> pockets = new ConcurrentHashMap<>();

  private record Key(UUID tenant, Quota quota) {}

  /** A refusal: the quota has no token for the tenant now; one will be there in {@code retryAfterMs}. */
  public static final class Empty extends RuntimeException {
    private final long retryAfterMs;

    Empty(long retryAfterMs) {
      super("no token left", null, false, false);
      this.retryAfterMs = retryAfterMs;
    }

    public long retryAfterMs() {
      return retryAfterMs;
    }
  }

  /** @param liveReplicas how many replicas share the buckets now (they share out the batches) */
  public RateLimits(Pool pool, IntSupplier liveReplicas) {
    this(pool, liveReplicas, Clock.systemUTC());
  }

  RateLimits(Pool pool, IntSupplier liveReplicas, Clock clock) {
    this.pool = pool;
    this.liveReplicas = liveReplicas;
    this.clock = clock;
  }

  /** The tokens one grant asks for beyond its waiters: the limit's share for this replica. */
  long batch(long perMinute) {
    return Math.max(1, perMinute / ((long) BATCH_DIVISOR * Math.max(1, liveReplicas.getAsInt())));
  }

  /**
   * Takes one token of the tenant's {@code quota}, whose limit is {@code perMinute}: succeeds at once
   * when this replica holds one, else after a grant from the shared bucket; fails with {@link Empty}
   * when there is none.
   */
  public Future<Void> take(UUID tenant, Quota quota, long perMinute) {
    Pocket p = pockets.computeIfAbsent(new Key(tenant, quota), k -> new Pocket());
    Promise<Void> waiter;
    boolean ask;
    synchronized (p) {
      if (p.tokens > 0) {
        p.tokens--;
        return Future.succeededFuture();
      }
      long now = clock.millis();
      if (now < p.emptyUntilMs) {
        return Future.failedFuture(new Empty(Math.max(1, p.refusedUntilMs - now)));
      }
      if (p.waiting.size() >= MAX_WAITING) {
        return Future.failedFuture(new Empty(1_000));
      }
      waiter = Promise.promise();
      p.waiting.add(waiter);
      ask = !p.asking;
      p.asking = true;
    }
    if (ask) {
      grant(tenant, quota, perMinute, p);
    }
    return waiter.future();
  }

  /** One trip to the shared bucket for what the pocket's waiters need and a batch besides. */
  private void grant(UUID tenant, Quota quota, long perMinute, Pocket p) {
    long batch = batch(perMinute);
    long want;
    synchronized (p) {
      want = Math.min(perMinute, p.waiting.size() + batch);
    }
    Database.inTenantOneTrip(pool, tenant, conn -> conn.preparedQuery(TAKE)
            .execute(Tuple.of(tenant, quota.wireName(), (double) perMinute, (int) want)))
        .onComplete(ar -> {
          List<Promise<Void>> admitted = new ArrayList<>();
          List<Promise<Void>> refused = new ArrayList<>();
          boolean again = false;
          long retryMs = 0;
          synchronized (p) {
            p.asking = false;
            if (ar.failed()) {
              refused.addAll(p.waiting);
              p.waiting.clear();
            } else {
              Row row = ar.result().iterator().next();
              long granted = row.getInteger("granted");
              double left = row.getDouble("left_over");
              p.tokens += granted;
              while (!p.waiting.isEmpty() && p.tokens > 0) {
                admitted.add(p.waiting.poll());
                p.tokens--;
              }
              long now = clock.millis();
              if (granted < want) {
                // The shared bucket ran dry: refuse here, without asking, until a batch has come back.
                retryMs = msFor(1 - left, perMinute);
                p.refusedUntilMs = now + retryMs;
                p.emptyUntilMs = now + Math.max(retryMs, msFor(batch - left, perMinute));
                refused.addAll(p.waiting);
                p.waiting.clear();
              } else if (!p.waiting.isEmpty()) {
                // More came while the grant was out: one more grant for them.
                p.asking = true;
                again = true;
              }
            }
          }
          admitted.forEach(Promise::complete);
          Throwable why = ar.failed() ? ar.cause() : new Empty(retryMs);
          refused.forEach(w -> w.fail(why));
          if (again) {
            grant(tenant, quota, perMinute, p);
          }
        });
  }

  /** Milliseconds for {@code tokens} to come back at {@code perMinute} (at least 1). */
  private static long msFor(double tokens, long perMinute) {
    return Math.max(1, (long) Math.ceil(tokens * 60_000 / perMinute));
  }

  /** Forgets the tenant's batches (it was deleted). */
  public void forget(UUID tenant) {
    pockets.keySet().removeIf(k -> k.tenant().equals(tenant));
  }

  /** Tokens this replica holds unspent for the tenant's quota (tests, benchmarks). */
  long held(UUID tenant, Quota quota) {
    Pocket p = pockets.get(new Key(tenant, quota));
    if (p == null) {
      return 0;
    }
    synchronized (p) {
      return p.tokens;
    }
  }

  /** One tenant's quota on this replica: its unspent tokens and who waits for more. */
  private static final class Pocket {
    long tokens;
    /** Until then the shared bucket is taken to be empty: refused without asking. */
    long emptyUntilMs;
    /** Until then a refusal's Retry-After counts down to the next token. */
    long refusedUntilMs;
    boolean asking;
    final Deque<Promise<Void>> waiting = new ArrayDeque<>();
  }
}
