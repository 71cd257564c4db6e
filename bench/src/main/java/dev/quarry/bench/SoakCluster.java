package dev.quarry.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The soak's own PostgreSQL cluster (Debian's postgresql-common tools, run as root): the soak
 * restarts its database, and the shared cluster on 5432 carries other work that must not see that.
 * Created on first use, reused afterwards (roles and pgvector made idempotently), and its database
 * recreated for every run.
 */
final class SoakCluster {
  static final String VERSION = "15";
  static final String NAME = "quarrysoak";
  static final String DATABASE = "quarry_soak";

  private final int port;

  SoakCluster(int port) {
    this.port = port;
  }

  int port() {
    return port;
  }

  /** Creates (once) and starts the cluster, and gives it the roles, pgvector and a fresh database. */
  void prepare() throws IOException, InterruptedException {
    String status = run(List.of("pg_lsclusters", "-h", VERSION, NAME), true);
    if (status.isBlank()) {
      run(List.of("pg_createcluster", "-p", Integer.toString(port), VERSION, NAME), false);
      status = run(List.of("pg_lsclusters", "-h", VERSION, NAME), false);
    }
    String[] fields = status.trim().split("\\s+");
    if (!fields[2].equals(Integer.toString(port))) {
      throw new IllegalStateException("cluster " + VERSION + "/" + NAME + " listens on " + fields[2] + ", not " + port
          + " (pg_dropcluster --stop " + VERSION + " " + NAME + " to start over)");
    }
    if (!fields[3].startsWith("online")) {
      start();
    }
    psql("postgres", """
        DO $$ BEGIN
          IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'quarry') THEN CREATE ROLE quarry; END IF;
          IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'quarry_app') THEN CREATE ROLE quarry_app; END IF;
        END $$;
        ALTER ROLE quarry WITH LOGIN CREATEDB NOSUPERUSER PASSWORD 'quarry';
        ALTER ROLE quarry_app WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS PASSWORD 'quarry_app';
        GRANT pg_signal_backend TO quarry;
        """);
    // Each on its own: psql -c sends one multi-statement string, which runs as one transaction.
    psql("postgres", "DROP DATABASE IF EXISTS " + DATABASE + " WITH (FORCE)");
    psql("postgres", "CREATE DATABASE " + DATABASE + " OWNER quarry");
    psql(DATABASE, "CREATE EXTENSION IF NOT EXISTS vector;");
  }

  /** Stops the cluster (fast: open sessions are ended, as in a real restart or failover). */
  void stop() throws IOException, InterruptedException {
    run(List.of("pg_ctlcluster", VERSION, NAME, "stop", "-m", "fast"), false);
  }

  void start() throws IOException, InterruptedException {
    run(List.of("pg_ctlcluster", VERSION, NAME, "start"), false);
  }

  /** One query's rows, fields separated by '|', as the superuser. */
  List<String> query(String sql) throws IOException, InterruptedException {
    List<String> rows = new ArrayList<>();
    for (String line : psql(DATABASE, sql).split("\n")) {
      if (!line.isBlank()) {
        rows.add(line);
      }
    }
    return rows;
  }

  /** Stops and removes the cluster, data directory and all. */
  void drop() throws IOException, InterruptedException {
    run(List.of("pg_dropcluster", "--stop", VERSION, NAME), false);
  }

  private String psql(String database, String sql) throws IOException, InterruptedException {
    return run(List.of("runuser", "-u", "postgres", "--", "psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1",
        "-p", Integer.toString(port), "-d", database, "-c", sql), false);
  }

  private static String run(List<String> command, boolean mayFail) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).directory(new java.io.File("/")).start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IOException(String.join(" ", command) + " did not finish in 120 s");
    }
    String text = new String(out, StandardCharsets.UTF_8);
    if (p.exitValue() != 0 && !mayFail) {
      throw new IOException(String.join(" ", command.subList(0, Math.min(4, command.size()))) + " exited "
          + p.exitValue() + ": " + text.strip());
    }
    return p.exitValue() == 0 ? text : "";
  }
}
