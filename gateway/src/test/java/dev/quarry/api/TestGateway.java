package dev.quarry.api;

import dev.quarry.ops.Config;
import dev.quarry.ops.Gateway;
import dev.quarry.ops.OpsSettings;
import dev.quarry.ops.QuarryMetrics;
import dev.quarry.sandbox.SandboxSettings;
import dev.quarry.support.TestDatabase;
import io.vertx.core.Vertx;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * The real gateway (the production {@link Gateway} verticle and its routes) on a random port, over
 * a fresh migrated database and a temporary data directory, with a small upload limit so that the
 * over-the-limit case stays cheap.
 */
public final class TestGateway implements AutoCloseable {
  public static final long UPLOAD_LIMIT = 256 * 1024;

  private final TestDatabase database;
  private final Path dataDir;
  private final Vertx vertx;
  private final Gateway gateway;
  private final WebClient client;
  private final Config config;

  private TestGateway(TestDatabase database, Path dataDir, Vertx vertx, Gateway gateway, Config config) {
    this.database = database;
    this.dataDir = dataDir;
    this.vertx = vertx;
    this.gateway = gateway;
    this.config = config;
    this.client = WebClient.create(vertx, new WebClientOptions().setDefaultHost("localhost").setDefaultPort(gateway.port()));
  }

  public static TestGateway start() throws IOException {
    return start(null);
  }

  /** With these sandbox settings instead of the environment's (tests that run code). */
  public static TestGateway start(SandboxSettings sandboxes) throws IOException {
    return startWithAgent(dataDir -> new Gateway.AgentWiring(null, sandboxes));
  }

  /** With analyses: the model endpoint and sandbox settings, made for the test's data directory. */
  public static TestGateway startWithAgent(java.util.function.Function<Path, Gateway.AgentWiring> wiring)
      throws IOException {
    TestDatabase database = TestDatabase.create();
    Path dataDir = Files.createTempDirectory("quarry-api-test");
    Config config = database.config().withDataDir(dataDir).withHttpPort(0).withMaxUploadBytes(UPLOAD_LIMIT);
    QuarryMetrics metrics = new QuarryMetrics();
    Vertx vertx = Gateway.vertx(metrics);
    Gateway gateway = new Gateway(config, OpsSettings.DEFAULTS, metrics, wiring.apply(dataDir));
    vertx.deployVerticle(gateway).await();
    return new TestGateway(database, dataDir, vertx, gateway, config);
  }

  public WebClient client() {
    return client;
  }

  public Vertx vertx() {
    return vertx;
  }

  public Config config() {
    return config;
  }

  public Gateway gateway() {
    return gateway;
  }

  public int port() {
    return gateway.port();
  }

  public String url() {
    return "http://localhost:" + gateway.port();
  }

  public Path dataDir() {
    return dataDir;
  }

  /** Rows in a table of the knowledge base, straight from PostgreSQL. */
  public long count(String table) {
    try (Connection c = database.jdbc(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT count(*) FROM " + table)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException("cannot count " + table, e);
    }
  }

  /** Names of the indexes on a table, straight from PostgreSQL's catalogue. */
  public java.util.List<String> indexes(String table) {
    try (Connection c = database.jdbc(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT indexname FROM pg_indexes WHERE tablename = '" + table + "'")) {
      java.util.List<String> names = new java.util.ArrayList<>();
      while (rs.next()) {
        names.add(rs.getString(1));
      }
      return names;
    } catch (SQLException e) {
      throw new IllegalStateException("cannot list the indexes of " + table, e);
    }
  }

  /** Files left in the uploads directory: there should never be any once a request has ended. */
  public long leftoverUploads() {
    Path uploads = ApiRoutes.uploadsDir(config);
    if (!Files.isDirectory(uploads)) {
      return 0;
    }
    try (Stream<Path> files = Files.list(uploads)) {
      return files.count();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() throws IOException {
    try {
      client.close();
      vertx.close().await();
    } finally {
      database.close();
      try (Stream<Path> walk = Files.walk(dataDir)) {
        walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }
}
