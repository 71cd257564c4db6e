package dev.quarry.tenancy;

import dev.quarry.store.Database;
import dev.quarry.store.Notifications;
import io.vertx.core.Future;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import io.vertx.core.buffer.Buffer;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * Tenants and their API keys. Keys live in a tenant table like any other (row-level security holds
 * them to their tenant); only the lookup of a presented key crosses tenants, through V7's
 * {@code api_key_tenant}, which answers nothing but the tenant of a live key.
 */
public final class TenantStore {
  private static final String INSERT_TENANT =
      "INSERT INTO tenants (id, name) VALUES ($1, $2) RETURNING id, name, created_at";
  private static final String LIST_TENANTS = "SELECT id, name, created_at FROM tenants ORDER BY created_at, id";
  private static final String GET_TENANT = "SELECT id, name, created_at FROM tenants WHERE id = $1";
  private static final String EXISTING_TENANTS = "SELECT id FROM tenants WHERE id = ANY($1)";
  private static final String INSERT_KEY = "INSERT INTO api_keys (id, tenant_id, prefix, key_hash, name)"
      + " VALUES ($1, $2, $3, $4, $5) RETURNING id, tenant_id, prefix, name, created_at, revoked_at";
  private static final String LIST_KEYS = "SELECT id, tenant_id, prefix, name, created_at, revoked_at"
      + " FROM api_keys WHERE tenant_id = $1 ORDER BY created_at, id";
  private static final String REVOKE_KEY = "UPDATE api_keys SET revoked_at = coalesce(revoked_at, now())"
      + " WHERE tenant_id = $1 AND id = $2";
  private static final String KEY_TENANT = "SELECT api_key_tenant($1) AS tenant_id";
  private static final String DELETE_TENANT = "SELECT delete_current_tenant() AS deleted";

  /** A tenant name that is already taken. */
  public static final class NameTaken extends RuntimeException {
    public NameTaken(String name) {
      super("a tenant named '" + name + "' already exists", null, false, false);
    }
  }

  /**
   * How long a looked-up key is trusted without asking the database again: a busy tenant's
   * requests (and the ones its quota refuses) then cost no query. A key revoked stops at once on
   * every replica (the revocation's notification drops the cached keys); this bounds how long a
   * replica that missed the notification (its LISTEN connection down) still takes it.
   */
  static final long KEY_CACHE_MS = 10_000;
  private static final int KEY_CACHE_MAX = 10_000;

  private record CachedKey(UUID tenantId, long expiresAtMs) {}

  private final Pool pool;
  private final Map<String, CachedKey> keyCache = new ConcurrentHashMap<>();
  /**
   * Moved on by every drop of cached keys: a look-up that began before a drop does not cache what
   * it read, which a revocation committed meanwhile may already have made stale.
   */
  private final java.util.concurrent.atomic.AtomicLong generation = new java.util.concurrent.atomic.AtomicLong();

  public TenantStore(Pool pool) {
    this.pool = pool;
  }

  /** A new tenant with its first key, in one transaction. */
  public Future<NewKey> createTenant(String name) {
    UUID id = UUID.randomUUID();
    ApiKeys.Generated generated = ApiKeys.generate();
    return pool.withTransaction(conn -> conn.preparedQuery(INSERT_TENANT).execute(Tuple.of(id, name))
            .compose(t -> conn.query(Database.setTenant(id)).execute())
            .compose(set -> conn.preparedQuery(INSERT_KEY).execute(keyTuple(id, generated, "initial"))))
        .map(rows -> new NewKey(key(rows.iterator().next()), generated.key()))
        .recover(err -> Future.failedFuture(
            err instanceof PgException pg && "23505".equals(pg.getSqlState()) ? new NameTaken(name) : err));
  }

  public Future<List<Tenant>> listTenants() {
    return pool.query(LIST_TENANTS).execute().map(rows -> {
      List<Tenant> out = new ArrayList<>(rows.size());
      rows.forEach(r -> out.add(tenant(r)));
      return out;
    });
  }

  public Future<Optional<Tenant>> tenant(UUID id) {
    return pool.preparedQuery(GET_TENANT).execute(Tuple.of(id))
        .map(rows -> rows.size() == 0 ? Optional.empty() : Optional.of(tenant(rows.iterator().next())));
  }

  /** Which of {@code ids} are tenants (the others were deleted, or never were). */
  public Future<java.util.Set<UUID>> existing(java.util.Set<UUID> ids) {
    return pool.preparedQuery(EXISTING_TENANTS).execute(Tuple.of(ids.toArray(UUID[]::new))).map(rows -> {
      java.util.Set<UUID> out = new java.util.HashSet<>();
      rows.forEach(r -> out.add(r.getUUID("id")));
      return out;
    });
  }

  /** Empty when there is no such tenant. */
  public Future<Optional<NewKey>> createKey(UUID tenantId, String name) {
    ApiKeys.Generated generated = ApiKeys.generate();
    return tenant(tenantId).compose(found -> found.isEmpty()
        ? Future.succeededFuture(Optional.empty())
        : Database.inTenant(pool, tenantId,
                conn -> conn.preparedQuery(INSERT_KEY).execute(keyTuple(tenantId, generated, name)))
            .map(rows -> Optional.of(new NewKey(key(rows.iterator().next()), generated.key()))));
  }

  /** Empty when there is no such tenant. */
  public Future<Optional<List<ApiKey>>> listKeys(UUID tenantId) {
    return tenant(tenantId).compose(found -> found.isEmpty()
        ? Future.succeededFuture(Optional.empty())
        : Database.inTenant(pool, tenantId, conn -> conn.preparedQuery(LIST_KEYS).execute(Tuple.of(tenantId)))
            .map(rows -> {
              List<ApiKey> out = new ArrayList<>(rows.size());
              rows.forEach(r -> out.add(key(r)));
              return Optional.of(out);
            }));
  }

  /**
   * False when the tenant has no such key. Revoking twice keeps the first revocation's time. Every
   * replica drops the tenant's cached keys when the revocation commits ({@link TenantEvents}).
   */
  public Future<Boolean> revokeKey(UUID tenantId, UUID keyId) {
    return Database.inTenant(pool, tenantId,
            conn -> conn.preparedQuery(REVOKE_KEY).execute(Tuple.of(tenantId, keyId))
                .compose(rows -> Notifications.publish(conn, TenantEvents.CHANNEL, TenantEvents.keysRevoked(tenantId))
                    .map(rows)))
        .map(rows -> {
          forgetKeysOf(tenantId);
          return rows.rowCount() > 0;
        });
  }

  /**
   * The tenant and every row it has, in every tenant table. False when there was no such tenant.
   * Every replica forgets what it caches of the tenant when the deletion commits ({@link TenantEvents}).
   */
  public Future<Boolean> deleteTenant(UUID tenantId) {
    return Database.inTenant(pool, tenantId, conn -> conn.query(DELETE_TENANT).execute()
            .compose(rows -> Notifications.publish(conn, TenantEvents.CHANNEL, TenantEvents.deleted(tenantId))
                .map(rows)))
        .map(rows -> {
          forgetKeysOf(tenantId);
          return rows.iterator().next().getBoolean("deleted");
        });
  }

  /** The tenant of a live key; empty for a malformed, unknown or revoked one. */
  public Future<Optional<UUID>> authenticate(String key) {
    if (!ApiKeys.wellFormed(key)) {
      return Future.succeededFuture(Optional.empty());
    }
    byte[] hash = ApiKeys.hash(key);
    String cacheKey = HexFormat.of().formatHex(hash);
    CachedKey cached = keyCache.get(cacheKey);
    long now = System.currentTimeMillis();
    if (cached != null && cached.expiresAtMs() > now) {
      return Future.succeededFuture(Optional.of(cached.tenantId()));
    }
    long asOf = generation.get();
    return pool.preparedQuery(KEY_TENANT).execute(Tuple.of(Buffer.buffer(hash)))
        .map(rows -> {
          UUID tenant = rows.iterator().next().getUUID("tenant_id");
          if (tenant != null && generation.get() == asOf) {
            if (keyCache.size() >= KEY_CACHE_MAX) {
              keyCache.clear();
            }
            keyCache.put(cacheKey, new CachedKey(tenant, now + KEY_CACHE_MS));
          }
          return Optional.ofNullable(tenant);
        });
  }

  /**
   * Tells every replica that the tenant's deletion begins, so that each ends its work for it (its
   * analyses, its sandboxes) while this one does; sent in a transaction of its own, before the rows go.
   */
  public Future<Void> announceDeletion(UUID tenantId) {
    return Notifications.publish(pool, TenantEvents.CHANNEL, TenantEvents.deleting(tenantId));
  }

  /** Drops the tenant's cached keys (which of them changed is not known here: all go). */
  public void forgetKeysOf(UUID tenantId) {
    generation.incrementAndGet();
    keyCache.values().removeIf(k -> k.tenantId().equals(tenantId));
  }

  /** Drops every cached key (notifications of revocations may have been missed). */
  public void forgetAllKeys() {
    generation.incrementAndGet();
    keyCache.clear();
  }

  private static Tuple keyTuple(UUID tenantId, ApiKeys.Generated generated, String name) {
    return Tuple.of(UUID.randomUUID(), tenantId, generated.prefix(),
        Buffer.buffer(ApiKeys.hash(generated.key())), name == null ? "" : name);
  }

  private static Tenant tenant(Row r) {
    return new Tenant(r.getUUID("id"), r.getString("name"), r.getOffsetDateTime("created_at"));
  }

  private static ApiKey key(Row r) {
    return new ApiKey(r.getUUID("id"), r.getUUID("tenant_id"), r.getString("prefix"), r.getString("name"),
        r.getOffsetDateTime("created_at"), r.getOffsetDateTime("revoked_at"));
  }
}
