package dev.quarry.support;

import dev.quarry.config.Config;
import dev.quarry.store.Database;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * A PostgreSQL cluster of a test's own (Debian's postgresql-common tools, as root), for tests that
 * stop and start the database: the shared cluster on 5432 carries every other test's databases.
 * It has the roles, pgvector and one migrated database, and is removed, data and all, on close.
 */
public final class ThrowawayCluster implements AutoCloseable {
  private static final String VERSION = "15";

  private final String name = "quarryt" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
  private final int port;
  private final Config config;

  private ThrowawayCluster(int port) {
    this.port = port;
    this.config = Config.fromEnv(Map.of("QUARRY_PG_PORT", Integer.toString(port), "QUARRY_PG_DATABASE", "quarry"));
  }

  /** Creates, starts and migrates a new cluster on a free port. */
  public static ThrowawayCluster create() throws IOException, InterruptedException {
    ThrowawayCluster cluster = bare();
    try {
      cluster.psql("postgres", "CREATE ROLE quarry WITH LOGIN CREATEDB PASSWORD 'quarry'; CREATE ROLE quarry_app WITH"
          + " LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS PASSWORD 'quarry_app';");
      cluster.psql("postgres", "CREATE DATABASE quarry OWNER quarry");
      cluster.psql("quarry", "CREATE EXTENSION vector");
      Database.migrate(cluster.config);
      return cluster;
    } catch (IOException | RuntimeException e) {
      cluster.close();
      throw e;
    }
  }

  /** A new cluster on a free port, started, with nothing of Quarry's in it: only its superuser, postgres. */
  public static ThrowawayCluster bare() throws IOException, InterruptedException {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    ThrowawayCluster cluster = new ThrowawayCluster(port);
    try {
      run("pg_createcluster", "-p", Integer.toString(port), VERSION, cluster.name);
      cluster.start();
      return cluster;
    } catch (IOException | RuntimeException e) {
      cluster.close();
      throw e;
    }
  }

  public int port() {
    return port;
  }

  /** Lets the superuser, postgres, log in over TCP with this password (as an administrator would). */
  public void superuserPassword(String password) throws IOException, InterruptedException {
    psql("postgres", "ALTER ROLE postgres PASSWORD '" + password.replace("'", "''") + "'");
  }

  /** Settings of a gateway working on this cluster's database. */
  public Config config() {
    return config;
  }

  /** Stops the server the way a restart or failover does: open sessions are ended. */
  public void stop() throws IOException, InterruptedException {
    run("pg_ctlcluster", VERSION, name, "stop", "-m", "fast");
  }

  /** Starts the server; returns once it accepts connections. */
  public void start() throws IOException, InterruptedException {
    run("pg_ctlcluster", VERSION, name, "start");
  }

  /** One query's rows, fields separated by '|', as the superuser. */
  public List<String> query(String sql) throws IOException, InterruptedException {
    return psql("quarry", sql).lines().filter(l -> !l.isBlank()).toList();
  }

  private String psql(String database, String sql) throws IOException, InterruptedException {
    return run("runuser", "-u", "postgres", "--", "psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1",
        "-p", Integer.toString(port), "-d", database, "-c", sql);
  }

  @Override
  public void close() throws IOException, InterruptedException {
    run("pg_dropcluster", "--stop", VERSION, name);
  }

  private static String run(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).directory(new java.io.File("/")).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IOException(String.join(" ", command) + " did not finish within 120 s");
    }
    if (p.exitValue() != 0) {
      throw new IOException(String.join(" ", command) + " exited " + p.exitValue() + ": " + out.strip());
    }
    return out;
  }
}
