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
    String name = "quarry_bench_" + purpose + suffix();
    admin(base, "DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    admin(base, "CREATE DATABASE " + name);
    BenchDatabase db = new BenchDatabase(base, base.withDatabase(name), false);
    if (quarrySchema) {
      Database.migrate(db.config);
    }
    return db;
  }

  /**
   * A database kept between runs, {@code quarry_bench_<purpose>} (plus {@code
   * QUARRY_BENCH_DB_SUFFIX}), for corpora that take minutes to load: reused when the load recorded
   * in it ({@link #markLoaded}) has the same fingerprint (with {@code quarrySchema}, migrated first);
   * otherwise created afresh ({@link #needsLoad()} then says so).
   * Closing it leaves it in place. Sessions in it build indexes with {@code maintenance_work_mem}
   * of {@code indexMemory}, so that an HNSW graph of a large corpus is built in memory.
   */
  public static BenchDatabase reusable(String purpose, boolean quarrySchema, String fingerprint,
      String indexMemory) {
    Config base = Config.fromEnv(System.getenv());
    String name = "quarry_bench_" + purpose + suffix();
    BenchDatabase db = new BenchDatabase(base, base.withDatabase(name), true);
    boolean reload = Boolean.getBoolean("bench.reload");
    if (!reload && db.exists()) {
      String recorded = db.recordedLoad();
      if (recorded != null && recorded.startsWith(fingerprint + "|")) {
        // A later migration is applied to the loaded rows, as it is to a deployment's.
        db.schema = quarrySchema ? Database.migrate(db.config) : 0;
        db.loadedSchema = Integer.parseInt(recorded.substring(fingerprint.length() + 1));
        db.reused = true;
        return db;
      }
    }
    admin(base, "DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    admin(base, "CREATE DATABASE " + name);
    admin(base, "ALTER DATABASE " + name + " SET maintenance_work_mem = '" + indexMemory + "'");
    db.schema = quarrySchema ? Database.migrate(db.config) : 0;
    db.fingerprint = fingerprint;
    return db;
  }

  private boolean reused;
  private String fingerprint;
  private int schema;
  private int loadedSchema;

  /** True when {@link #reusable} made this database afresh: load it, then {@link #markLoaded}. */
  public boolean needsLoad() {
    return !reused;
  }

  /** Records that the load finished, and how long it took, so a later run may reuse it. */
  public void markLoaded(double seconds, String detail) throws SQLException {
    try (Connection c = jdbc(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE bench_load (fingerprint text NOT NULL, load_seconds float8 NOT NULL,"
          + " detail text NOT NULL, loaded_at timestamptz NOT NULL DEFAULT now())");
      try (java.sql.PreparedStatement p = c.prepareStatement(
          "INSERT INTO bench_load (fingerprint, load_seconds, detail) VALUES (?, ?, ?)")) {
        p.setString(1, fingerprint + "|" + schema);
        p.setDouble(2, seconds);
        p.setString(3, detail);
        p.executeUpdate();
      }
    }
  }

  /** The recorded load's seconds and time, for the report: "312 s, 2026-12-02 06:50 UTC". */
  public String loadRecord() throws SQLException {
    try (Connection c = jdbc(); Statement s = c.createStatement();
        java.sql.ResultSet rs = s.executeQuery("SELECT load_seconds, to_char(loaded_at AT TIME ZONE 'UTC',"
            + " 'YYYY-MM-DD HH24:MI') FROM bench_load")) {
      rs.next();
      return String.format(java.util.Locale.ROOT, "%.0f s (%s UTC%s)", rs.getDouble(1), rs.getString(2),
          !reused ? "" : loadedSchema == schema ? ", reused" : ", reused; loaded at schema V" + loadedSchema
              + ", migrated to V" + schema);
    }
  }

  /** The recorded load's seconds. */
  public double recordedSeconds() throws SQLException {
    try (Connection c = jdbc(); Statement s = c.createStatement();
        java.sql.ResultSet rs = s.executeQuery("SELECT load_seconds FROM bench_load")) {
      rs.next();
      return rs.getDouble(1);
    }
  }

  /** What the recorded load's time went to. */
  public String loadDetail() throws SQLException {
    try (Connection c = jdbc(); Statement s = c.createStatement();
        java.sql.ResultSet rs = s.executeQuery("SELECT detail FROM bench_load")) {
      rs.next();
      return rs.getString(1);
    }
  }

  private boolean exists() {
    try (Connection c = DriverManager.getConnection(base.jdbcUrl(), base.pgUser(), base.pgPassword());
        Statement s = c.createStatement();
        java.sql.ResultSet rs = s.executeQuery("SELECT 1 FROM pg_database WHERE datname = '"
            + config.pgDatabase() + "'")) {
      return rs.next();
    } catch (SQLException e) {
      return false;
    }
  }

  /** fingerprint|schema of the finished load, or null when there is none. */
  private String recordedLoad() {
    try (Connection c = jdbc(); Statement s = c.createStatement();
        java.sql.ResultSet rs = s.executeQuery("SELECT fingerprint FROM bench_load")) {
      return rs.next() ? rs.getString(1) : null;
    } catch (SQLException e) {
      return null; // no bench_load table: an interrupted load
    }
  }

  private static String suffix() {
    String suffix = System.getenv().getOrDefault("QUARRY_BENCH_DB_SUFFIX", "");
    if (!suffix.matches("[a-z0-9_]*")) {
      throw new IllegalArgumentException("QUARRY_BENCH_DB_SUFFIX must be lower-case letters, digits or underscores");
    }
    return suffix;
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
