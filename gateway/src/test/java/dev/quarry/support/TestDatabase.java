package dev.quarry.support;

import dev.quarry.ops.Config;
import dev.quarry.store.Database;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;

/**
 * A throwaway database on the PostgreSQL that {@code ./quarry test} set up, migrated to the current
 * schema. One per test class, so test classes never see each other's rows; dropped on close.
 */
public final class TestDatabase implements AutoCloseable {
  private final Config config;
  private final String name;

  private TestDatabase(Config config, String name) {
    this.config = config;
    this.name = name;
  }

  public static TestDatabase create() {
    Config base = Config.fromEnv();
    String name = "quarry_t_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
    try (Connection c = DriverManager.getConnection(base.jdbcUrl(), base.pgUser(), base.pgPassword());
        Statement s = c.createStatement()) {
      s.execute("CREATE DATABASE " + name);
    } catch (SQLException e) {
      throw new IllegalStateException("cannot create a test database on " + base.jdbcUrl()
          + " as " + base.pgUser() + " (has ./quarry setup run?): " + e.getMessage(), e);
    }
    Config config = base.withDatabase(name);
    Database.migrate(config);
    return new TestDatabase(config, name);
  }

  public Config config() {
    return config;
  }

  public Connection jdbc() throws SQLException {
    return DriverManager.getConnection(config.jdbcUrl(), config.pgUser(), config.pgPassword());
  }

  @Override
  public void close() {
    Config base = Config.fromEnv();
    try (Connection c = DriverManager.getConnection(base.jdbcUrl(), base.pgUser(), base.pgPassword());
        Statement s = c.createStatement()) {
      s.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    } catch (SQLException e) {
      throw new IllegalStateException("cannot drop test database " + name, e);
    }
  }
}
