package dev.quarry.bench;

import dev.quarry.ops.Config;
import dev.quarry.store.Database;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * A database of the bench's own on the configured PostgreSQL, created afresh and dropped on close,
 * so a bench never touches the service's data and a crashed run leaves nothing to trip the next.
 */
public final class BenchDatabase implements AutoCloseable {
  private final Config base;
  private final Config config;
  private final boolean keep;

  private BenchDatabase(Config base, Config config, boolean keep) {
    this.base = base;
    this.config = config;
    this.keep = keep;
  }

  /** A new empty database {@code quarry_bench_<purpose>}; with {@code quarrySchema}, migrated. */
  public static BenchDatabase fresh(String purpose, boolean quarrySchema) {
    Config base = Config.fromEnv();
    String name = "quarry_bench_" + purpose;
    admin(base, "DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    admin(base, "CREATE DATABASE " + name);
    BenchDatabase db = new BenchDatabase(base, base.withDatabase(name), false);
    if (quarrySchema) {
      Database.migrate(db.config);
    }
    return db;
  }

  /** A database that already exists under {@code config}; closing it leaves it in place. */
  public static BenchDatabase kept(Config config) {
    return new BenchDatabase(config, config, true);
  }

  public Config config() {
    return config;
  }

  public Connection jdbc() throws SQLException {
    return DriverManager.getConnection(config.jdbcUrl(), config.pgUser(), config.pgPassword());
  }

  @Override
  public void close() {
    if (!keep) {
      admin(base, "DROP DATABASE IF EXISTS " + config.pgDatabase() + " WITH (FORCE)");
    }
  }

  private static void admin(Config base, String sql) {
    try (Connection c = DriverManager.getConnection(base.jdbcUrl(), base.pgUser(), base.pgPassword());
        Statement s = c.createStatement()) {
      s.execute(sql);
    } catch (SQLException e) {
      throw new IllegalStateException("'" + sql + "' failed on " + base.jdbcUrl() + " as " + base.pgUser()
          + " (is PostgreSQL up? scripts/setup.sh starts it): " + e.getMessage(), e);
    }
  }
}
