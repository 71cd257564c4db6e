package dev.quarry.store;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.time.Duration;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This gateway process as one replica among those sharing the database (V18's {@code replicas}):
 * registered under a random id when it starts, its lease renewed every third of the lease while it
 * lives, its row removed when it stops. What a replica holds in the database (its places in the
 * tenants' concurrent quotas) counts only while its lease is current, so the places of a replica
 * that died without giving them back are free once its lease has lapsed; the sweep
 * ({@link #sweepLapsed}) then removes its rows.
 *
 * <p>Also how many replicas are live (the rate quotas size their batches by it) and the claim of
 * scheduled work that one replica does for all ({@link #claim}).
 */
public final class Replicas {
  private static final Logger log = LoggerFactory.getLogger(Replicas.class);

  private static final String UPSERT = "INSERT INTO replicas (id, gateway_id, lease_until)"
      + " VALUES ($1, $2, clock_timestamp() + make_interval(secs => $3))"
      + " ON CONFLICT (id) DO UPDATE SET lease_until = clock_timestamp() + make_interval(secs => $3)";
  private static final String LIVE = "SELECT count(*) AS n FROM replicas WHERE lease_until > clock_timestamp()";
  private static final String REMOVE = "DELETE FROM replicas WHERE id = $1";
  /** A lapsed replica's rows go with it (its places cascade). */
  private static final String SWEEP = "DELETE FROM replicas WHERE lease_until < clock_timestamp()";
  private static final String CLAIM = "INSERT INTO cluster_jobs AS j (name, next_run_at, last_run_by)"
      + " VALUES ($1, clock_timestamp() + make_interval(secs => $2), $3)"
      + " ON CONFLICT (name) DO UPDATE SET next_run_at = clock_timestamp() + make_interval(secs => $2),"
      + " last_run_by = $3 WHERE j.next_run_at <= clock_timestamp() RETURNING name";

  private final Vertx vertx;
  private final Pool pool;
  private final UUID id = UUID.randomUUID();
  private final String gatewayId;
  private final Duration lease;
  private volatile int live = 1;
  private volatile boolean registered;
  private long timer = -1;
  private final java.util.List<Runnable> onRenewal = new java.util.concurrent.CopyOnWriteArrayList<>();

  /**
   * @param gatewayId this gateway's QUARRY_GATEWAY_ID (shown beside the random id)
   * @param lease     how long a replica counts without renewing
   */
  public Replicas(Vertx vertx, Pool pool, String gatewayId, Duration lease) {
    if (lease.toMillis() < 1_000) {
      throw new IllegalArgumentException("a replica lease must be at least a second, got " + lease);
    }
    this.vertx = vertx;
    this.pool = pool;
    this.gatewayId = gatewayId;
    this.lease = lease;
  }

  /** This process' id among the replicas (random, new at every start). */
  public UUID id() {
    return id;
  }

  public Duration lease() {
    return lease;
  }

  /** Replicas whose lease was current at the last renewal (at least 1: this one). */
  public int live() {
    return live;
  }

  /** Something to run after each renewal (retries of places whose release failed, say). */
  public void onRenewal(Runnable action) {
    onRenewal.add(action);
  }

  /** Registers this replica and renews its lease every third of it until {@link #stop}. */
  public Future<Void> start() {
    return renew().onSuccess(v -> {
      long every = Math.max(100, lease.toMillis() / 3);
      timer = vertx.setPeriodic(every, every, t -> renew()
          .onFailure(e -> log.warn("renewing this replica's lease failed (its places stop counting if it lapses):"
              + " {}", e.toString())));
    });
  }

  private Future<Void> renew() {
    double seconds = lease.toMillis() / 1000.0;
    return pool.preparedQuery(UPSERT).execute(Tuple.of(id, gatewayId, seconds))
        .compose(done -> pool.query(LIVE).execute())
        .map(rows -> {
          live = (int) Math.max(1, rows.iterator().next().getLong("n"));
          registered = true;
          for (Runnable r : onRenewal) {
            try {
              r.run();
            } catch (RuntimeException e) {
              log.warn("after the lease renewal: {}", e.toString());
            }
          }
          return null;
        });
  }

  /** Whether this replica's row has been written at least once. */
  public boolean registered() {
    return registered;
  }

  /** Stops renewing and removes this replica's row: its places go with it. */
  public Future<Void> stop() {
    if (timer >= 0) {
      vertx.cancelTimer(timer);
      timer = -1;
    }
    return pool.preparedQuery(REMOVE).execute(Tuple.of(id)).<Void>mapEmpty()
        .recover(e -> {
          log.warn("removing this replica's row failed; its lease lapses instead: {}", e.toString());
          return Future.succeededFuture();
        });
  }

  /** Removes the rows of replicas whose lease has lapsed; completes with how many. */
  public Future<Integer> sweepLapsed() {
    return pool.query(SWEEP).execute().map(rows -> rows.rowCount());
  }

  /**
   * Whether this replica runs the scheduled job {@code name} now: true for exactly one replica per
   * {@code every} (the first to ask once it is due), false for the others and until it is due again.
   */
  public Future<Boolean> claim(String name, Duration every) {
    return pool.preparedQuery(CLAIM).execute(Tuple.of(name, every.toMillis() / 1000.0, id))
        .map(rows -> rows.rowCount() > 0);
  }
}
