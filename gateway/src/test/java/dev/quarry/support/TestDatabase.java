package dev.quarry.support;

import dev.quarry.config.Config;
import dev.quarry.search.SearchService;
import dev.quarry.store.Database;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import dev.quarry.tenancy.ApiKeys;
import java.sql.Connection;
import java.sql.PreparedStatement;
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
    Config base = Config.fromEnv(System.getenv());
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

  /**
   * A connection as the owner role that sees and writes every tenant's rows (V7's deliberate
   * maintenance path), for fixtures and for assertions that look across tenants.
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

  /** A live API key of the tenant, written straight into the database (no gateway needed). */
  public String createKey(UUID tenant) {
    ApiKeys.Generated key = ApiKeys.generate();
    try (Connection c = jdbc(); PreparedStatement s = c.prepareStatement(
        "INSERT INTO api_keys (id, tenant_id, prefix, key_hash, name) VALUES (?, ?, ?, ?, 'test')")) {
      s.setObject(1, UUID.randomUUID());
      s.setObject(2, tenant);
      s.setString(3, key.prefix());
      s.setBytes(4, ApiKeys.hash(key.key()));
      s.executeUpdate();
    } catch (SQLException e) {
      throw new IllegalStateException("cannot create a key for tenant " + tenant, e);
    }
    return key.key();
  }

  /** A connection as the gateway's role: row-level security holds it to the tenant it sets. */
  public Connection appJdbc() throws SQLException {
    return DriverManager.getConnection(config.jdbcUrl(), config.pgAppUser(), config.pgAppPassword());
  }

  /** Builds the search's vector index, as the owner (the app role may not create indexes). */
  public void prepare(Vertx vertx, SearchService search) {
    Pool owner = Database.ownerPool(vertx, config);
    try {
      search.prepare(owner).await();
    } finally {
      owner.close().await();
    }
  }

  @Override
  public void close() {
    Config base = Config.fromEnv(System.getenv());
    try (Connection c = DriverManager.getConnection(base.jdbcUrl(), base.pgUser(), base.pgPassword());
        Statement s = c.createStatement()) {
      awaitAppSessionsGone(s);
      s.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    } catch (SQLException e) {
      throw new IllegalStateException("cannot drop test database " + name, e);
    }
  }

  /**
   * The app role's sessions end a moment after their pool closed the sockets, and the owner may
   * not terminate another role's sessions (what WITH (FORCE) would do): wait for them, bounded.
   */
  private void awaitAppSessionsGone(Statement s) throws SQLException {
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
    while (System.nanoTime() < deadline) {
      try (java.sql.ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE datname = '"
          + name + "' AND usename = '" + config.pgAppUser() + "'")) {
        rs.next();
        if (rs.getLong(1) == 0) {
          return;
        }
      }
      java.util.concurrent.locks.LockSupport.parkNanos(50_000_000);
    }
  }
}
