package dev.quarry.api;

import dev.quarry.store.Database;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;

/**
 * The MCP sessions of every replica, in PostgreSQL ({@code mcp_sessions}, V20): a session opened
 * through one gateway is served by any other, which builds its own copy of the SDK's session from
 * what the client said at {@code initialize}. Each statement is one round trip in the tenant's
 * transaction (row-level security holds it to that tenant), with {@code synchronous_commit} off:
 * a session is bookkeeping, and one lost to a database crash is opened again by its client.
 */
final class McpSessions {
  private static final String OPEN = "SELECT opened, held FROM open_mcp_session($1, $2, $3, $4, $5)";
  /**
   * The session's initialize parameters if it exists and is not idle; its last use is moved on only
   * when it is older than $4 seconds, so that a busy session is not a write per request.
   */
  private static final String USE = "WITH s AS (SELECT id, init, last_used FROM mcp_sessions"
      + " WHERE id = $1 AND tenant_id = $2 AND last_used > now() - make_interval(secs => $3)),"
      + " touched AS (UPDATE mcp_sessions m SET last_used = now() FROM s"
      + " WHERE m.id = s.id AND s.last_used < now() - make_interval(secs => $4) RETURNING m.id)"
      + " SELECT init FROM s";
  private static final String CLOSE = "DELETE FROM mcp_sessions WHERE id = $1 AND tenant_id = $2";
  /** How stale a session's recorded last use may be (its idle end is this much late at most). */
  static final Duration TOUCH_EVERY = Duration.ofSeconds(30);

  private final Pool pool;
  private final Duration idle;

  /** @param idle how long a session may go unused before it is gone */
  McpSessions(Pool pool, Duration idle) {
    this.pool = pool;
    this.idle = idle;
  }

  /** Whether a session was opened, and how many the tenant held (not idle) when it asked. */
  record Opened(boolean opened, int held) {}

  /** Records a new session of the tenant unless it holds {@code most} already (on all replicas together). */
  Future<Opened> open(UUID tenant, UUID id, JsonObject init, int most) {
    return Database.inTenantOneTrip(pool, tenant, conn -> conn.preparedQuery(OPEN)
            .execute(Tuple.of(id, tenant, init, most, idle.toMillis() / 1000.0)))
        .map(rows -> {
          Row r = rows.iterator().next();
          return new Opened(r.getBoolean("opened"), r.getInteger("held"));
        });
  }

  /** The session's initialize parameters, if it is the tenant's and not idle; marks it used. */
  Future<Optional<JsonObject>> use(UUID tenant, UUID id) {
    return Database.inTenantOneTrip(pool, tenant, conn -> conn.preparedQuery(USE)
            .execute(Tuple.of(id, tenant, idle.toMillis() / 1000.0, TOUCH_EVERY.toMillis() / 1000.0)))
        .map(rows -> rows.size() == 0 ? Optional.empty() : Optional.of(rows.iterator().next().getJsonObject("init")));
  }

  /** Ends the session for every replica; false when the tenant had no such session. */
  Future<Boolean> close(UUID tenant, UUID id) {
    return Database.inTenantOneTrip(pool, tenant, conn -> conn.preparedQuery(CLOSE).execute(Tuple.of(id, tenant)))
        .map(rows -> rows.rowCount() > 0);
  }
}
