package dev.quarry.api;

import dev.quarry.config.Config;
import dev.quarry.gateway.Gateway;
import dev.quarry.gateway.OpsSettings;
import dev.quarry.telemetry.QuarryMetrics;
import dev.quarry.sandbox.SandboxSettings;
import dev.quarry.sandbox.MountPrivacy;
import dev.quarry.support.PrivateMounts;
import dev.quarry.support.TestDatabase;
import io.vertx.core.Vertx;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.ext.web.client.WebClientSession;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import dev.quarry.tenancy.Tenants;
import java.util.UUID;
import java.util.function.UnaryOperator;
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
 * over-the-limit case stays cheap. Its data and run directories are filesystems of their own
 * (tmpfs, {@link PrivateMounts}) and it runs with {@code QUARRY_SANDBOX_MOUNT_PRIVACY=require}, so
 * every test's sandboxes see no host path of them.
 */
public final class TestGateway implements AutoCloseable {
  public static final long UPLOAD_LIMIT = 256 * 1024;
  public static final String ADMIN_TOKEN = "test-admin-token-0123456789";

  private final TestDatabase database;
  private final Path dataDir;
  private final Vertx vertx;
  private final Gateway gateway;
  private final WebClient bare;
  private final WebClient metricsClient;
  private final WebClient client;
  private final Config config;
  private final String apiKey;
  private final PrivateMounts mounts;

  private TestGateway(TestDatabase database, Path dataDir, Vertx vertx, Gateway gateway, Config config,
      PrivateMounts mounts) {
    this.mounts = mounts;
    this.database = database;
    this.dataDir = dataDir;
    this.vertx = vertx;
    this.gateway = gateway;
    this.config = config;
    this.bare = WebClient.create(vertx, new WebClientOptions().setDefaultHost("localhost").setDefaultPort(gateway.port()));
    this.metricsClient = WebClient.create(vertx,
        new WebClientOptions().setDefaultHost("localhost").setDefaultPort(gateway.metricsPort()));
    this.apiKey = createKey(Tenants.DEFAULT);
    this.client = clientFor(apiKey);
  }

  public static TestGateway start() throws IOException {
    return start(config -> config, null);
  }

  /** As {@link #start()}, for a field initialiser: {@code @AutoClose final TestGateway gateway = TestGateway.started();}. */
  public static TestGateway started() {
    try {
      return start();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** As {@link #start(UnaryOperator)}, for a field initialiser. */
  public static TestGateway started(UnaryOperator<Config> adjust) {
    try {
      return start(adjust);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** With settings changed from the test defaults (quotas, say). */
  public static TestGateway start(UnaryOperator<Config> adjust) throws IOException {
    return start(adjust, null);
  }

  /** With these sandbox settings instead of the environment's (tests that run code). */
  public static TestGateway start(SandboxSettings sandboxes) throws IOException {
    return start(config -> config, sandboxes);
  }

  public static TestGateway start(UnaryOperator<Config> adjust, SandboxSettings sandboxes) throws IOException {
    return startWithAgent(adjust, dataDir -> new Gateway.AgentWiring(null, sandboxes));
  }

  /** With analyses: the model endpoint and sandbox settings, made for the test's data directory. */
  public static TestGateway startWithAgent(java.util.function.Function<Path, Gateway.AgentWiring> wiring)
      throws IOException {
    return startWithAgent(config -> config, wiring);
  }

  public static TestGateway startWithAgent(UnaryOperator<Config> adjust,
      java.util.function.Function<Path, Gateway.AgentWiring> wiring) throws IOException {
    TestDatabase database = TestDatabase.create();
    Path dataDir = Files.createTempDirectory("quarry-api-test");
    PrivateMounts mounts = new PrivateMounts();
    try {
      // The tests' layout is the private one (README, Security), and the gateway is held to it.
      mounts.ensure(dataDir);
      Config base = database.config().withDataDir(dataDir).withHttpPort(0).withMaxUploadBytes(UPLOAD_LIMIT);
      Config config = adjust.apply(base.withTenancy(base.tenancy().withAdminToken(ADMIN_TOKEN)));
      Gateway.AgentWiring wired = wiring.apply(dataDir);
      SandboxSettings sandboxes = wired.sandboxes() != null ? wired.sandboxes()
          : SandboxSettings.fromEnv(System.getenv()).withRunRoot(dataDir.resolve("run"));
      mounts.ensure(sandboxes.runRoot(), config.dataDir());
      if (!config.dataDir().equals(dataDir)) {
        mounts.ensure(config.dataDir(), sandboxes.runRoot());
      }
      QuarryMetrics metrics = new QuarryMetrics();
      Vertx vertx = Gateway.vertx(metrics);
      Gateway gateway = new Gateway(config, OpsSettings.DEFAULTS, metrics,
          new Gateway.AgentWiring(wired.agent(), sandboxes.withMountPolicy(MountPrivacy.Policy.REQUIRE)));
      vertx.deployVerticle(gateway).await();
      return new TestGateway(database, dataDir, vertx, gateway, config, mounts);
    } catch (RuntimeException | IOException e) {
      mounts.close();
      throw e;
    }
  }

  /** A client that sends the default tenant's API key with every request. */
  public WebClient client() {
    return client;
  }

  /** A client that sends no credentials at all. */
  public WebClient bareClient() {
    return bare;
  }

  /** A client of the metrics port ({@code GET /metrics}), which takes no credentials. */
  public WebClient metricsClient() {
    return metricsClient;
  }

  /** A client that sends this key (or admin token) as its bearer credential. */
  public WebClient clientFor(String bearer) {
    return WebClientSession.create(bare).addHeader("Authorization", "Bearer " + bearer);
  }

  public WebClient admin() {
    return clientFor(ADMIN_TOKEN);
  }

  /** The default tenant's API key, which {@link #client()} sends. */
  public String apiKey() {
    return apiKey;
  }

  /** A new tenant through the admin API: its id and first key. */
  public NewTenant createTenant(String name) {
    HttpResponse<Buffer> r = admin().post("/v1/admin/tenants")
        .sendJsonObject(new JsonObject().put("name", name)).await();
    if (r.statusCode() != 201) {
      throw new IllegalStateException("creating tenant " + name + ": " + r.statusCode() + " " + r.bodyAsString());
    }
    JsonObject body = r.bodyAsJsonObject();
    return new NewTenant(UUID.fromString(body.getString("id")), body.getString("api_key"));
  }

  public record NewTenant(UUID id, String apiKey) {}

  /** A new API key of an existing tenant, through the admin API. */
  public String createKey(UUID tenant) {
    HttpResponse<Buffer> r = admin().post("/v1/admin/tenants/" + tenant + "/keys")
        .sendJsonObject(new JsonObject().put("name", "test")).await();
    if (r.statusCode() != 201) {
      throw new IllegalStateException("creating a key for " + tenant + ": " + r.statusCode() + " " + r.bodyAsString());
    }
    return r.bodyAsJsonObject().getString("api_key");
  }

  public TestDatabase database() {
    return database;
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

  /** The port {@code GET /metrics} is served on. */
  public int metricsPort() {
    return gateway.metricsPort();
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

  /** Rows in a table of the knowledge base, of every tenant, straight from PostgreSQL. */
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
  /** The answers this gateway is writing as their clients take them. */
  ResponseStreams streams() {
    return gateway.api().streams();
  }

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
      bare.close();
      metricsClient.close();
      vertx.close().await();
    } finally {
      database.close();
      mounts.close();
      try (Stream<Path> walk = Files.walk(dataDir)) {
        walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }
}
