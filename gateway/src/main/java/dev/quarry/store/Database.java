package dev.quarry.store;

import dev.quarry.config.Config;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.SqlConnection;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import org.flywaydb.core.Flyway;

/**
 * The PostgreSQL side: schema migrations (applied at start-up, as the owner role) and the reactive
 * pool the gateway works through (as the app role, which row-level security holds to one tenant
 * per transaction: see V7).
 */
public final class Database {
  private Database() {}

  /**
   * Applies the versioned migrations in {@code db/migration} as the owner role. Blocking (JDBC):
   * call it before the event loop takes traffic, or from a worker.
   *
   * @return the schema version this gateway needs (and the database now has): readiness checks it
   */
  public static int migrate(Config config) {
    Flyway flyway = Flyway.configure()
        .dataSource(config.jdbcUrl(), config.pgUser(), config.pgPassword())
        .locations("classpath:db/migration")
        .placeholders(Map.of("appRole", config.pgAppUser()))
        .load();
    flyway.migrate();
    var current = flyway.info().current();
    return current == null ? 0 : Integer.parseInt(current.getVersion().getVersion());
  }

  /**
   * Refuses to go on with an app role that row-level security would not hold: a superuser, a role
   * with BYPASSRLS, or one that owns tables (the owner may opt out of the fence). Also the first
   * login as that role, so a wrong password fails start-up, not the first request. Blocking (JDBC).
   */
  public static void checkAppRole(Config config) {
    try (Connection c = DriverManager.getConnection(config.jdbcUrl(), config.pgAppUser(), config.pgAppPassword());
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT r.rolsuper, r.rolbypassrls,"
            + " (SELECT count(*) FROM pg_tables t WHERE t.tableowner = current_user) AS owned"
            + " FROM pg_roles r WHERE r.rolname = current_user")) {
      rs.next();
      String why = rs.getBoolean(1) ? "is a superuser" : rs.getBoolean(2) ? "has BYPASSRLS"
          : rs.getLong(3) > 0 ? "owns " + rs.getLong(3) + " tables" : null;
      if (why != null) {
        throw new IllegalStateException("QUARRY_PG_APP_USER " + config.pgAppUser() + " " + why
            + ", so row-level security would not hold it to one tenant; the gateway works only as a role that"
            + " owns nothing and cannot bypass it (README, Tenants, keys and quotas)");
      }
    } catch (SQLException e) {
      throw new IllegalStateException("cannot log in to " + config.jdbcUrl() + " as QUARRY_PG_APP_USER "
          + config.pgAppUser() + ": " + e.getMessage(), e);
    }
  }

  /** The gateway's pool: the app role, which sees no tenant's rows until one is set. */
  public static Pool pool(Vertx vertx, Config config) {
    return pool(vertx, config, config.pgPoolSize());
  }

  /** The gateway's pool with another size than QUARRY_PG_POOL_SIZE (tests of pool pressure). */
  public static Pool pool(Vertx vertx, Config config, int size) {
    return pool(vertx, config, config.pgAppUser(), config.pgAppPassword(), size);
  }

  /**
   * A small pool as the owner role, for schema work at start-up (the vector index); close it when
   * that is done: the gateway holds no owner connection once it serves. Row-level security holds
   * the owner too, so it reads no tenant's rows through this either.
   */
  public static Pool ownerPool(Vertx vertx, Config config) {
    return pool(vertx, config, config.pgUser(), config.pgPassword(), 1);
  }

  /** How the app role connects: the pool's options, for a connection of its own (LISTEN). */
  public static PgConnectOptions appConnectOptions(Config config) {
    return connectOptions(config, config.pgAppUser(), config.pgAppPassword());
  }

  private static PgConnectOptions connectOptions(Config config, String user, String password) {
    return new PgConnectOptions()
        .setHost(config.pgHost())
        .setPort(config.pgPort())
        .setDatabase(config.pgDatabase())
        .setUser(user)
        .setPassword(password)
        .setCachePreparedStatements(true)
        .setPipeliningLimit(256);
  }

  private static Pool pool(Vertx vertx, Config config, String user, String password, int size) {
    PgConnectOptions connect = connectOptions(config, user, password);
    return PgBuilder.pool()
        .with(new PoolOptions().setMaxSize(size))
        .connectingTo(connect)
        .using(vertx)
        .build();
  }

  /**
   * Runs {@code work} in a transaction of one tenant: row-level security shows and accepts only
   * that tenant's rows, whatever the statements say. The setting is transaction-local, so the
   * connection goes back to the pool without it. Commits when {@code work} succeeds, rolls back
   * when it fails; a database out of reach fails it with {@link DatabaseUnavailable}.
   */
  public static <T> Future<T> inTenant(Pool pool, UUID tenantId, Function<SqlConnection, Future<T>> work) {
    if (tenantId == null) {
      return Future.failedFuture(new IllegalArgumentException("tenant id must not be null"));
    }
    return pool.withTransaction(conn -> conn.query(setTenant(tenantId)).execute()
        .compose(set -> work.apply(conn)))
        .recover(e -> Future.failedFuture(unreachable(e) && !(e instanceof DatabaseUnavailable)
            ? new DatabaseUnavailable(e) : e));
  }

  /**
   * One statement in a transaction of one tenant, in one round trip: BEGIN (with the tenant set),
   * the statement and COMMIT go out together on one connection (pipelined), so a quota's count costs
   * one trip to the database, not four. The commit does not wait for the disk
   * ({@code synchronous_commit = off}): what these statements write is bookkeeping (places, tokens)
   * that a crash of PostgreSQL may lose the last instants of, never documents. A statement that fails
   * turns the COMMIT into a rollback; the future fails with its error.
   */
  public static <T> Future<T> inTenantOneTrip(Pool pool, UUID tenantId, Function<SqlConnection, Future<T>> statement) {
    if (tenantId == null) {
      return Future.failedFuture(new IllegalArgumentException("tenant id must not be null"));
    }
    return pool.getConnection().compose(conn -> {
      Future<?> begin = conn.query("BEGIN; " + setTenant(tenantId) + "; SET LOCAL synchronous_commit = off").execute();
      Future<T> result = statement.apply(conn);
      Future<?> commit = conn.query("COMMIT").execute();
      return Future.join(begin, result, commit).eventually(conn::close).transform(all -> {
        if (begin.failed()) {
          return Future.failedFuture(begin.cause());
        }
        if (result.failed()) {
          return Future.failedFuture(result.cause());
        }
        return commit.failed() ? Future.failedFuture(commit.cause()) : Future.succeededFuture(result.result());
      });
    }).recover(e -> Future.failedFuture(unreachable(e) && !(e instanceof DatabaseUnavailable)
        ? new DatabaseUnavailable(e) : e));
  }

  /**
   * Within a transaction nothing but PostgreSQL's connection does I/O, so any I/O failure (a reset
   * socket as the server goes down) is the database's too.
   */
  private static boolean unreachable(Throwable e) {
    return DatabaseUnavailable.matches(e) || e instanceof java.io.IOException;
  }

  /**
   * The statement that sets the tenant for the rest of the transaction, for code that writes its
   * own BEGIN … COMMIT (to pipeline it). A UUID's text form is hex digits and dashes only, so it
   * is safe to splice.
   */
  public static String setTenant(UUID tenantId) {
    return "SET LOCAL quarry.tenant_id = '" + tenantId + "'";
  }
}
