package dev.quarry.tenancy;

import dev.quarry.store.Database;
import dev.quarry.store.Replicas;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Places in the tenants' concurrent quotas, counted across the replicas: each place is a row of
 * {@code quota_places} (V18) held by this replica until it is given back. A place is taken in one
 * round trip that counts the tenant's places of live replicas and adds one only below the limit,
 * one taker at a time ({@code take_quota_place}); so the limit holds for the whole cluster however
 * the load balancer spreads the tenant's requests. A replica that dies holding places frees them
 * when its lease lapses ({@link Replicas}). A place whose release fails (the database away) is
 * released again after each lease renewal until it goes.
 */
public final class Places {
  private static final Logger log = LoggerFactory.getLogger(Places.class);
  private static final String TAKE = "SELECT taken, held FROM take_quota_place($1, $2, $3, $4, $5)";
  private static final String GIVE_BACK = "DELETE FROM quota_places WHERE id = $1";
  private static final String HELD = "SELECT count(*) AS n FROM quota_places p JOIN replicas r ON r.id = p.replica_id"
      + " WHERE p.tenant_id = $1 AND p.quota = $2 AND r.lease_until > clock_timestamp()";

  private final Pool pool;
  private final Replicas replicas;
  /** Places whose release failed, by id, with their tenant: given back again after each renewal. */
  private final Map<UUID, UUID> owed = new ConcurrentHashMap<>();

  public Places(Pool pool, Replicas replicas) {
    this.pool = pool;
    this.replicas = replicas;
    replicas.onRenewal(this::retryReleases);
  }

  /** The tenant already holds {@code held} places of the quota, its limit: none is taken. */
  public static final class Full extends RuntimeException {
    private final long held;

    Full(long held) {
      super("no place left", null, false, false);
      this.held = held;
    }

    public long held() {
      return held;
    }
  }

  /** One place held; {@link #release} gives it back, once, whatever the path (later calls do nothing). */
  public final class Place {
    private final UUID id;
    private final UUID tenant;
    private final AtomicBoolean released = new AtomicBoolean();
    private volatile Future<Void> release;

    private Place(UUID id, UUID tenant) {
      this.id = id;
      this.tenant = tenant;
    }

    /** Gives the place back; completes once the cluster no longer counts it (never fails). */
    public Future<Void> release() {
      if (released.compareAndSet(false, true)) {
        release = giveBack(id, tenant);
      }
      Future<Void> r = release;
      return r == null ? Future.succeededFuture() : r;
    }
  }

  /**
   * A place of the tenant's {@code quota}, or a failure: {@link Full} when it holds {@code most}
   * across the live replicas already.
   */
  public Future<Place> take(UUID tenant, String quota, long most) {
    UUID id = UUID.randomUUID();
    int limit = (int) Math.min(Integer.MAX_VALUE, most);
    return Database.inTenantOneTrip(pool, tenant, conn -> conn.preparedQuery(TAKE)
            .execute(Tuple.of(id, tenant, quota, replicas.id(), limit)))
        .compose(rows -> {
          Row row = rows.iterator().next();
          return row.getBoolean("taken") ? Future.succeededFuture(new Place(id, tenant))
              : Future.failedFuture(new Full(row.getInteger("held")));
        });
  }

  /** The tenant's places of {@code quota} across the live replicas now. */
  public Future<Long> held(UUID tenant, String quota) {
    return Database.inTenantOneTrip(pool, tenant, conn -> conn.preparedQuery(HELD).execute(Tuple.of(tenant, quota)))
        .map(rows -> rows.iterator().next().getLong("n"));
  }

  private Future<Void> giveBack(UUID id, UUID tenant) {
    return Database.inTenantOneTrip(pool, tenant, conn -> conn.preparedQuery(GIVE_BACK).execute(Tuple.of(id)))
        .<Void>map(rows -> {
          owed.remove(id);
          return null;
        })
        .recover(e -> {
          owed.put(id, tenant);
          log.warn("giving back a place of tenant {} failed; it is given back after the next lease renewal: {}",
              tenant, e.toString());
          return Future.succeededFuture();
        });
  }

  private void retryReleases() {
    for (Map.Entry<UUID, UUID> e : owed.entrySet()) {
      Database.inTenantOneTrip(pool, e.getValue(), conn -> conn.preparedQuery(GIVE_BACK).execute(Tuple.of(e.getKey())))
          .onSuccess(rows -> owed.remove(e.getKey()));
    }
  }
}
