package dev.quarry.store;

import dev.quarry.ops.Config;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import org.flywaydb.core.Flyway;

/** The PostgreSQL side: schema migrations (applied at start-up) and the reactive pool. */
public final class Database {
  private Database() {}

  /**
   * Applies the versioned migrations in {@code db/migration}. Blocking (JDBC): call it before the
   * event loop takes traffic, or from a worker.
   *
   * @return the schema version this gateway needs (and the database now has): readiness checks it
   */
  public static int migrate(Config config) {
    Flyway flyway = Flyway.configure()
        .dataSource(config.jdbcUrl(), config.pgUser(), config.pgPassword())
        .locations("classpath:db/migration")
        .load();
    flyway.migrate();
    var current = flyway.info().current();
    return current == null ? 0 : Integer.parseInt(current.getVersion().getVersion());
  }

  public static Pool pool(Vertx vertx, Config config) {
    PgConnectOptions connect = new PgConnectOptions()
        .setHost(config.pgHost())
        .setPort(config.pgPort())
        .setDatabase(config.pgDatabase())
        .setUser(config.pgUser())
        .setPassword(config.pgPassword())
        .setCachePreparedStatements(true)
        .setPipeliningLimit(256);
    return PgBuilder.pool()
        .with(new PoolOptions().setMaxSize(config.pgPoolSize()))
        .connectingTo(connect)
        .using(vertx)
        .build();
  }
}
