package dev.quarry.tenancy;

import dev.quarry.config.Quota;

import dev.quarry.config.TenancySettings;
import dev.quarry.store.Database;
import dev.quarry.store.Notifications;
import dev.quarry.store.Replicas;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.time.Clock;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.EnumMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Per-tenant quotas, counted across the gateway's replicas (decision record 0070): rates
 * (requests per minute) as token buckets in PostgreSQL that each replica draws on a small batch at a
 * time ({@link RateLimits}), concurrent work (analyses, ingests, sandboxes, request bodies) as places
 * held in PostgreSQL by the replica doing it ({@link Places}). Stored bytes are checked inside the
 * ingest transaction; model tokens per day are kept in {@code token_usage}. Limits come from
 * {@code tenant_quotas} over the configured defaults, re-read at most every {@link #LIMITS_TTL_MS}
 * (at once on every replica when an admin changes them: {@link TenantEvents}).
 * The rate of a tenant's sandbox callbacks ({@code callbacks_per_minute}) is a token bucket in each
 * replica's memory at the replica's share, the quota over the live replicas, so that a call can wait
 * its turn without a trip to the database (decision record 0031).
 */
public final class Quotas {
  static final long LIMITS_TTL_MS = 10_000;
  /** Every quota's column, in the enum's order: one column per quota, named as it is on the wire. */
  private static final String COLUMNS = java.util.Arrays.stream(Quota.values()).map(Quota::wireName)
      .collect(java.util.stream.Collectors.joining(", "));
  /** The quotas whose columns are {@code integer} (the others are {@code bigint}). */
  private static final java.util.Set<Quota> INTEGER_COLUMNS = java.util.EnumSet.of(Quota.REQUESTS_PER_MINUTE,
      Quota.CONCURRENT_ANALYSES, Quota.CONCURRENT_SANDBOXES, Quota.CONCURRENT_INGESTS, Quota.CALLBACKS_PER_MINUTE);
  private static final String GET_OVERRIDES = "SELECT " + COLUMNS + " FROM tenant_quotas WHERE tenant_id = $1";
  private static final String UPSERT_OVERRIDES = "INSERT INTO tenant_quotas (tenant_id, " + COLUMNS + ") VALUES ($1, "
      + java.util.stream.IntStream.rangeClosed(2, Quota.values().length + 1).mapToObj(i -> "$" + i)
          .collect(java.util.stream.Collectors.joining(", "))
      + ") ON CONFLICT (tenant_id) DO UPDATE SET "
      + java.util.stream.IntStream.range(0, Quota.values().length)
          .mapToObj(i -> Quota.values()[i].wireName() + " = $" + (i + 2))
          .collect(java.util.stream.Collectors.joining(", "));
  private static final String TOKENS_TODAY =
      "SELECT coalesce(sum(tokens), 0) AS tokens FROM token_usage WHERE tenant_id = $1 AND day = $2";
  private static final String ADD_TOKENS = "INSERT INTO token_usage AS u (tenant_id, day, tokens)"
      + " VALUES ($1, $2, $3) ON CONFLICT (tenant_id, day) DO UPDATE SET tokens = u.tokens + $3";

  private final Pool pool;
  private final TenancySettings settings;
  private final Clock clock;
  private final Map<UUID, Cached> limits = new ConcurrentHashMap<>();
  private final RateLimits rates;
  private final Places places;
  private final Replicas replicas;
  private final Map<UUID, TokenBucket> callbackBuckets = new ConcurrentHashMap<>();

  private record Cached(TenantLimits limits, long readAtMs) {}

  /** @param replicas this replica among those sharing the database, whose places it takes */
  public Quotas(Pool pool, TenancySettings settings, Replicas replicas) {
    this(pool, settings, replicas, Clock.systemUTC());
  }

  Quotas(Pool pool, TenancySettings settings, Replicas replicas, Clock clock) {
    this.pool = pool;
    this.settings = settings;
    this.clock = clock;
    this.rates = new RateLimits(pool, replicas::live, clock);
    this.places = new Places(pool, replicas);
    this.replicas = replicas;
  }

  /** The tenant's limits in force (cached for a few seconds). */
  public Future<TenantLimits> limits(UUID tenantId) {
    Cached cached = limits.get(tenantId);
    long now = clock.millis();
    if (cached != null && now - cached.readAtMs() < LIMITS_TTL_MS) {
      return Future.succeededFuture(cached.limits());
    }
    return Database.inTenant(pool, tenantId, conn -> conn.preparedQuery(GET_OVERRIDES).execute(Tuple.of(tenantId)))
        .map(rows -> {
          TenantLimits l = merge(rows.size() == 0 ? null : rows.iterator().next());
          limits.put(tenantId, new Cached(l, now));
          return l;
        });
  }

  private TenantLimits merge(Row overrides) {
    Map<Quota, Long> values = new EnumMap<>(Quota.class);
    for (Quota q : Quota.values()) {
      Long own = overrides == null ? null : overrides.getLong(q.wireName());
      values.put(q, own == null ? settings.defaultOf(q) : own);
    }
    return new TenantLimits(values);
  }

  /**
   * Sets a tenant's own limits: a null value goes back to the default. Fails with
   * IllegalArgumentException naming the quota for a value outside 1..its maximum.
   */
  public Future<TenantLimits> setOverrides(UUID tenantId, Map<Quota, Long> overrides) {
    for (Map.Entry<Quota, Long> e : overrides.entrySet()) {
      Long v = e.getValue();
      long max = settings.maximumOf(e.getKey());
      if (v != null && (v < 1 || v > max)) {
        return Future.failedFuture(new IllegalArgumentException("quota '" + e.getKey().wireName()
            + "' must be between 1 and " + max + " (QUARRY_QUOTA_" + e.getKey().name() + "_MAX); got " + v));
      }
    }
    Tuple args = Tuple.of(tenantId);
    for (Quota q : Quota.values()) {
      Long v = overrides.get(q);
      args.addValue(v == null ? null : INTEGER_COLUMNS.contains(q) ? (Object) v.intValue() : v);
    }
    // The other replicas drop their cached limits when this commits (TenantEvents).
    return Database.inTenant(pool, tenantId, conn -> conn.preparedQuery(UPSERT_OVERRIDES).execute(args)
            .compose(done -> Notifications.publish(conn, TenantEvents.CHANNEL, TenantEvents.quotasChanged(tenantId))))
        .compose(done -> {
          limits.remove(tenantId);
          callbackBuckets.remove(tenantId);
          return limits(tenantId);
        });
  }

  /** Counts one request against the tenant's requests per minute; fails when there is none left. */
  public Future<Void> admitRequest(UUID tenantId) {
    return admitRate(tenantId, Quota.REQUESTS_PER_MINUTE, "requests");
  }

  /**
   * Counts one unit of a rate quota (a per-minute quota: requests, or any other) against the
   * tenant's limit across the replicas; fails with QuotaExceeded, "more than N {@code units} in a
   * minute", when there is none left. Every rate quota goes through here, so through one mechanism.
   */
  public Future<Void> admitRate(UUID tenantId, Quota quota, String units) {
    return limits(tenantId).compose(l -> {
      long perMinute = l.of(quota);
      return rates.take(tenantId, quota, perMinute).recover(e -> Future.failedFuture(
          e instanceof RateLimits.Empty empty
              ? new QuotaExceeded(quota, perMinute, (empty.retryAfterMs() + 999) / 1000,
                  "more than " + perMinute + " " + units + " in a minute")
              : e));
    });
  }

  /**
   * A turn for one callback of the tenant's sandboxes against its {@code callbacks_per_minute}: the
   * milliseconds it waits before it is served (0: now), counted at once, first come first served; or
   * a QuotaExceeded, counting nothing, when its turn would come more than {@code maxWaitMs} from now
   * (after its cell's wall time).
   */
  public Future<Long> reserveCallback(UUID tenantId, long maxWaitMs) {
    return limits(tenantId).compose(l -> {
      long perMinute = l.of(Quota.CALLBACKS_PER_MINUTE);
      // This replica's share: the replicas' buckets together give the tenant its quota.
      long share = Math.max(1, perMinute / Math.max(1, replicas.live()));
      TokenBucket bucket = callbackBuckets.compute(tenantId, (id, b) -> b == null || b.capacity() != share
          ? new TokenBucket(share, share * Quota.CALLBACK_BURST_SECONDS / 60, clock.millis()) : b);
      long waitMs = bucket.reserve(clock.millis(), Math.max(0, maxWaitMs));
      return waitMs >= 0
          ? Future.succeededFuture(waitMs)
          : Future.failedFuture(new QuotaExceeded(Quota.CALLBACKS_PER_MINUTE, perMinute,
              Math.max(1, Quota.CALLBACK_BURST_SECONDS), "the calls of the tenant's sandboxes (search,"
              + " list_documents, llm) are over " + perMinute + " a minute, and this call's turn would come after its"
              + " cell's wall time"));
    });
  }

  /**
   * A place in one of a tenant's concurrent quotas, counted across the replicas. {@link #release}
   * gives it back (once) and completes when no replica counts it any more; {@link #close} does the
   * same without waiting.
   */
  public interface Permit extends AutoCloseable {
    Future<Void> release();

    @Override
    default void close() {
      release();
    }
  }

  /**
   * Takes a place for one analysis of the tenant, or fails with QuotaExceeded when it already runs
   * as many as its quota allows, on whichever replicas. Release the permit when the analysis ends,
   * on every path.
   */
  public Future<Permit> acquireAnalysis(UUID tenantId) {
    return acquire(tenantId, Quota.CONCURRENT_ANALYSES,
        max -> "the tenant already runs " + max + " analyses; wait for one to finish");
  }

  /**
   * Takes a place for an analysis taken over from a replica that died or handed it off: it was
   * admitted under the quota when it started and its place went with its replica, so it takes one
   * whatever the tenant holds now (for a moment it may hold one more than its quota).
   */
  public Future<Permit> holdAnalysis(UUID tenantId) {
    return places.take(tenantId, Quota.CONCURRENT_ANALYSES.wireName(), Long.MAX_VALUE).map(place -> (Permit) place::release);
  }

  /**
   * Takes a place for one ingest of the tenant, or fails with QuotaExceeded when it already has as
   * many under way as its quota allows, on whichever replicas. Release the permit when the ingest
   * ends, on every path.
   */
  public Future<Permit> acquireIngest(UUID tenantId) {
    return acquire(tenantId, Quota.CONCURRENT_INGESTS,
        max -> "the tenant already has " + max + " ingests under way (waiting or running);"
            + " send the next when one has finished");
  }

  /**
   * Takes a place for one sandbox of the tenant, or fails with QuotaExceeded when it already holds as
   * many as its {@code concurrent_sandboxes} allows, on whichever replicas. (Its share of one
   * replica's sandboxes is that replica's own affair: SandboxService.)
   */
  public Future<Permit> acquireSandbox(UUID tenantId) {
    return acquire(tenantId, Quota.CONCURRENT_SANDBOXES,
        max -> "the tenant already holds " + max + " sandboxes; wait for one of them to end");
  }

  /** The name under which request bodies' places are counted (a fixed bound, not an admin's quota). */
  public static final String REQUEST_BODIES = "request_bodies";

  /**
   * Takes a place for one request body the tenant is sending, across the replicas; fails with
   * {@link Places.Full} when it is sending {@code most} already.
   */
  public Future<Permit> acquireBody(UUID tenantId, int most) {
    return places.take(tenantId, REQUEST_BODIES, most).map(place -> (Permit) place::release);
  }

  /**
   * Takes a place among the event streams following one analysis, on whichever replicas they are;
   * fails with {@link Places.Full} when {@code most} follow it already. Counted under a name of the
   * analysis' own (a fixed bound, not an admin's quota).
   */
  public Future<Permit> acquireFollower(UUID tenantId, UUID analysis, int most) {
    return places.take(tenantId, "followers " + analysis, most).map(place -> (Permit) place::release);
  }

  private Future<Permit> acquire(UUID tenantId, Quota quota, java.util.function.LongFunction<String> refusal) {
    return limits(tenantId).compose(l -> {
      long max = l.of(quota);
      return places.take(tenantId, quota.wireName(), max)
          .<Permit>map(place -> place::release)
          .recover(e -> Future.failedFuture(e instanceof Places.Full
              ? new QuotaExceeded(quota, max, 5, refusal.apply(max)) : e));
    });
  }

  /** The tenant's places of a concurrent quota held now, across the live replicas. */
  public Future<Long> held(UUID tenantId, Quota quota) {
    return places.held(tenantId, quota.wireName());
  }

  /** Fails with QuotaExceeded when the tenant has used its model tokens for today (UTC). */
  public Future<Long> checkModelTokens(UUID tenantId) {
    LocalDate today = LocalDate.now(clock.withZone(ZoneOffset.UTC));
    return limits(tenantId).compose(l -> Database.inTenant(pool, tenantId,
            conn -> conn.preparedQuery(TOKENS_TODAY).execute(Tuple.of(tenantId, today)))
        .compose(rows -> {
          long used = rows.iterator().next().getLong("tokens");
          long max = l.of(Quota.MODEL_TOKENS_PER_DAY);
          if (used >= max) {
            long secondsToMidnight = java.time.Duration.between(clock.instant(),
                today.plusDays(1).atStartOfDay().toInstant(ZoneOffset.UTC)).toSeconds();
            return Future.failedFuture(new QuotaExceeded(Quota.MODEL_TOKENS_PER_DAY, max, secondsToMidnight,
                "the tenant used " + used + " model tokens today (UTC)"));
          }
          return Future.succeededFuture(max - used);
        }));
  }

  /** Adds model tokens the tenant used to today's (UTC) count. */
  public Future<Void> recordModelTokens(UUID tenantId, long tokens) {
    if (tokens < 0) {
      return Future.failedFuture(new IllegalArgumentException("tokens must not be negative, got " + tokens));
    }
    LocalDate today = LocalDate.now(clock.withZone(ZoneOffset.UTC));
    return Database.inTenant(pool, tenantId,
        conn -> conn.preparedQuery(ADD_TOKENS).execute(Tuple.of(tenantId, today, tokens))).mapEmpty();
  }

  /** Forgets what is cached of a tenant (after its deletion). */
  public void forget(UUID tenantId) {
    limits.remove(tenantId);
    rates.forget(tenantId);
    callbackBuckets.remove(tenantId);
  }

  /** Forgets the tenant's cached limits: an admin changed them (on whichever replica). */
  public void forgetLimits(UUID tenantId) {
    limits.remove(tenantId);
  }

  /** Forgets every cached limit (notifications may have been missed). */
  public void forgetAllLimits() {
    limits.clear();
  }
}
