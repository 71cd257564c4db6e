package dev.quarry.config;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Every setting of the gateway, read once at start-up from the environment and passed down through
 * constructors. Each setting names its variable, its default and its bounds; a bad value fails
 * start-up with a message naming the variable.
 */
public record Config(
    int httpPort,
    String pgHost,
    int pgPort,
    String pgDatabase,
    String pgUser,
    String pgPassword,
    int pgPoolSize,
    Path dataDir,
    long maxUploadBytes,
    int contextBudgetChars,
    String embeddingProvider,
    String embeddingModel,
    String embeddingBaseUrl,
    String embeddingApiKey,
    int searchDefaultLimit,
    int searchMaxLimit,
    int maxQueryChars,
    String pgAppUser,
    String pgAppPassword,
    TenancySettings tenancy,
    long bodyTimeoutMs,
    int sseHeartbeatSeconds,
    int searchMemoryMb,
    int httpIdleSeconds,
    int maxConnections,
    int searchTenantInFlight,
    int uploadSpaceMb,
    IngestSettings ingest) {

  /** The embedding model bundled with the gateway (search/OnnxEmbedder's BGE small). */
  public static final String DEFAULT_EMBEDDING_MODEL = "bge-small-en-v1.5-q";

  /**
   * From one configuration map: the environment over the optional {@code QUARRY_CONFIG_FILE}, as
   * {@link ConfigSource#load} merges them (an entry point passes {@code System.getenv()} through it).
   */
  public static Config fromEnv(Map<String, String> values) {
    return read(new Settings(values));
  }

  /** The settings this record reads, with defaults and bounds, for the README check. */
  public static List<Settings.Definition> definitions() {
    Settings s = new Settings(Map.of());
    read(s);
    return s.definitions();
  }

  /** Reads this record's settings with {@code s}, which also records their definitions. */
  public static Config read(Settings s) {
    String openAiBase = s.given("OPENAI_BASE_URL");
    String openAiKey = s.given("OPENAI_API_KEY");
    return new Config(
        s.integer("QUARRY_HTTP_PORT", 8080, 0, 65535),
        s.string("QUARRY_PG_HOST", "127.0.0.1"),
        s.integer("QUARRY_PG_PORT", 5432, 1, 65535),
        s.string("QUARRY_PG_DATABASE", "quarry"),
        s.string("QUARRY_PG_USER", "quarry"),
        s.secret("QUARRY_PG_PASSWORD", "quarry"),
        s.integer("QUARRY_PG_POOL_SIZE", 16, 1, 200),
        Path.of(s.string("QUARRY_DATA_DIR", "var/data")),
        s.integer("QUARRY_MAX_UPLOAD_BYTES", 50 * 1024 * 1024, 1, Integer.MAX_VALUE),
        s.integer("QUARRY_CONTEXT_BUDGET_CHARS", 10_000, 200, 200_000),
        s.oneOf("QUARRY_EMBEDDING_PROVIDER", "onnx", "onnx", "openai"),
        s.string("QUARRY_EMBEDDING_MODEL", DEFAULT_EMBEDDING_MODEL),
        s.string("QUARRY_EMBEDDING_BASE_URL", openAiBase == null ? "" : openAiBase),
        s.secret("QUARRY_EMBEDDING_API_KEY", openAiKey == null ? "" : openAiKey),
        s.integer("QUARRY_SEARCH_DEFAULT_LIMIT", 10, 1, 100),
        s.integer("QUARRY_SEARCH_MAX_LIMIT", 100, 1, 1000),
        s.integer("QUARRY_MAX_QUERY_CHARS", 4_000, 10, 100_000),
        s.string("QUARRY_PG_APP_USER", "quarry_app"),
        s.secret("QUARRY_PG_APP_PASSWORD", "quarry_app"),
        TenancySettings.read(s),
        s.integer("QUARRY_BODY_TIMEOUT_MS", 120_000, 100, 3_600_000),
        s.integer("QUARRY_SSE_HEARTBEAT_SECONDS", 15, 1, 300),
        s.integer("QUARRY_SEARCH_MEMORY_MB", 1024, 0, 1_048_576),
        s.integer("QUARRY_HTTP_IDLE_SECONDS", 60, 1, 3600),
        s.integer("QUARRY_MAX_CONNECTIONS", 4096, 1, 1_000_000),
        s.integer("QUARRY_SEARCH_TENANT_IN_FLIGHT", 0, 0, 1024),
        s.integer("QUARRY_UPLOAD_SPACE_MB", 1024, 1, 1_048_576),
        IngestSettings.read(s));
  }

  /**
   * How many of one tenant's searches this gateway runs at once ({@code QUARRY_SEARCH_TENANT_IN_FLIGHT};
   * 0: half the gateway's CPUs, at least 1): a search ranks on the event loops, so a tenant with more
   * at once would take more of their CPU than its neighbours get.
   */
  public int searchTenantLimit() {
    return searchTenantInFlight > 0 ? searchTenantInFlight
        : Math.max(1, Runtime.getRuntime().availableProcessors() / 2);
  }

  /** The same settings with another room for uploads under way (tests of the room use a small one). */
  public Config withUploadSpaceMb(int mb) {
    return Records.with(this, "uploadSpaceMb", mb);
  }

  /** The same settings with another idle limit of connections (tests of idle connections use a short one). */
  public Config withHttpIdleSeconds(int seconds) {
    return Records.with(this, "httpIdleSeconds", seconds);
  }

  /** The same settings with another cap on open connections. */
  public Config withMaxConnections(int max) {
    return Records.with(this, "maxConnections", max);
  }

  /** The same settings with another database name: tests use one database per test class. */
  public Config withDatabase(String database) {
    return Records.with(this, "pgDatabase", database);
  }

  public Config withDataDir(Path dir) {
    return Records.with(this, "dataDir", dir);
  }

  public Config withHttpPort(int port) {
    return Records.with(this, "httpPort", port);
  }

  public Config withMaxUploadBytes(long bytes) {
    return Records.with(this, "maxUploadBytes", bytes);
  }

  /** The same settings with other memory limits for ingestion. */
  public Config withIngest(IngestSettings settings) {
    return Records.with(this, "ingest", settings);
  }

  public Config withTenancy(TenancySettings settings) {
    return Records.with(this, "tenancy", settings);
  }

  /** The same settings with another pool size (tests of pool pressure use a small one). */
  public Config withPgPoolSize(int size) {
    return Records.with(this, "pgPoolSize", size);
  }

  /** The same settings with another body timeout (tests of stalled bodies use a short one). */
  public Config withBodyTimeoutMs(long ms) {
    return Records.with(this, "bodyTimeoutMs", ms);
  }

  /** The same settings with another heartbeat interval of event streams (tests wait for one). */
  public Config withSseHeartbeatSeconds(int seconds) {
    return Records.with(this, "sseHeartbeatSeconds", seconds);
  }

  /** The same settings with another heap budget for BM25 postings kept in memory (0: none). */
  public Config withSearchMemoryMb(int mb) {
    return Records.with(this, "searchMemoryMb", mb);
  }

  /** How often a server-sent event stream that has nothing to say writes a comment line. */
  public java.time.Duration sseHeartbeat() {
    return java.time.Duration.ofSeconds(sseHeartbeatSeconds);
  }

  /** Redacts the password and the API key: a Config may end up in a log line. */
  @Override
  public String toString() {
    return "Config[httpPort=" + httpPort + ", pg=" + pgUser + "@" + pgHost + ":" + pgPort + "/" + pgDatabase
        + ", pgPoolSize=" + pgPoolSize + ", dataDir=" + dataDir + ", embedding=" + embeddingProvider + "/"
        + embeddingModel + (embeddingApiKey.isEmpty() ? "" : ", embeddingApiKey=***") + "]";
  }

  public String jdbcUrl() {
    return "jdbc:postgresql://" + pgHost + ":" + pgPort + "/" + pgDatabase;
  }
}
