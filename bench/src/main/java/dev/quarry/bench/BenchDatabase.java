package dev.quarry.bench;

import dev.quarry.config.Config;
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

  /**
   * A new empty database {@code quarry_bench_<purpose>}; with {@code quarrySchema}, migrated. {@code
   * QUARRY_BENCH_DB_SUFFIX} (letters, digits, underscores) is appended to the name, so that two
   * checkouts can run the same benchmark on one PostgreSQL at once without dropping each other's.
   */
  public static BenchDatabase fresh(String purpose, boolean quarrySchema) {
    Config base = Config.fromEnv(System.getenv());
    String suffix = System.getenv().getOrDefault("QUARRY_BENCH_DB_SUFFIX", "");
    if (!suffix.matches("[a-z0-9_]*")) {
      throw new IllegalArgumentException("QUARRY_BENCH_DB_SUFFIX must be lower-case letters, digits or underscores");
    }
    String name = "quarry_bench_" + purpose + suffix;
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

  /**
   * As the tables' owner, opted in to every tenant's rows (V7's maintenance path): the bench loads
   * corpora and reads figures across tenants. The service itself never works this way.
   */
  public Connection jdbc() throws SQLException {
    Connection c = DriverManager.getConnection(config.jdbcUrl(), config.pgUser(), config.pgPassword());
    try (Statement s = c.createStatement()) {
      s.execute("SET quarry.all_tenants = on");
    } catch (SQLException e) {
      c.close();
      throw e;
    }
    return c;
  }

  /** A live API key of the tenant, written straight into the database. */
  public String createKey(java.util.UUID tenant) throws SQLException {
    dev.quarry.tenancy.ApiKeys.Generated key = dev.quarry.tenancy.ApiKeys.generate();
    try (Connection c = jdbc(); java.sql.PreparedStatement s = c.prepareStatement(
        "INSERT INTO api_keys (id, tenant_id, prefix, key_hash, name) VALUES (?, ?, ?, ?, 'bench')")) {
      s.setObject(1, java.util.UUID.randomUUID());
      s.setObject(2, tenant);
      s.setString(3, key.prefix());
      s.setBytes(4, dev.quarry.tenancy.ApiKeys.hash(key.key()));
      s.executeUpdate();
    }
    return key.key();
  }

  @Override
  public void close() {
    if (!keep) {
      awaitAppSessionsGone();
      admin(base, "DROP DATABASE IF EXISTS " + config.pgDatabase() + " WITH (FORCE)");
    }
  }

  /**
   * The gateway's role (quarry_app) closes its sessions a moment after its pool does, and the
   * owner may not terminate another role's sessions: wait for them, bounded.
   */
  private void awaitAppSessionsGone() {
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
    try (Connection c = DriverManager.getConnection(base.jdbcUrl(), base.pgUser(), base.pgPassword());
        Statement s = c.createStatement()) {
      while (System.nanoTime() < deadline) {
        try (java.sql.ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE datname = '"
            + config.pgDatabase() + "' AND usename = '" + config.pgAppUser() + "'")) {
          rs.next();
          if (rs.getLong(1) == 0) {
            return;
          }
        }
        java.util.concurrent.locks.LockSupport.parkNanos(50_000_000);
      }
    } catch (SQLException e) {
      // the DROP below reports what is wrong
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
