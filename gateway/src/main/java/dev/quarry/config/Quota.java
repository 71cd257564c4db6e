package dev.quarry.config;

/**
 * The quotas every tenant has. Each has a built-in default and maximum, which
 * {@code QUARRY_QUOTA_<NAME>} and {@code QUARRY_QUOTA_<NAME>_MAX} override.
 */
public enum Quota {
  REQUESTS_PER_MINUTE("requests_per_minute", 600, 100_000, 10_000_000),
  STORED_BYTES("stored_bytes", 1L << 30, 1L << 40, Long.MAX_VALUE / 2),
  DOCUMENT_BYTES("document_bytes", 50L << 20, 1L << 30, Integer.MAX_VALUE),
  CONCURRENT_ANALYSES("concurrent_analyses", 4, 64, 10_000),
  MODEL_TOKENS_PER_DAY("model_tokens_per_day", 2_000_000, 1_000_000_000, Long.MAX_VALUE / 2),
  /**
   * Sandboxes the tenant holds at once across the replicas (executions, analyses and replays,
   * starting, running or queued for a slot); on one replica never more than its fair share of that
   * replica's sandboxes.
   */
  CONCURRENT_SANDBOXES("concurrent_sandboxes", 8, 1024, 1024),
  /**
   * Ingests the tenant has under way at once across the replicas, from the moment its document has
   * arrived (waiting for an ingest worker, or converting, embedding and writing); of them, at most
   * half a replica's ingest workers run at once there, the rest wait in the tenant's own line.
   */
  CONCURRENT_INGESTS("concurrent_ingests", 4, 64, 10_000),
  /**
   * Callbacks of the tenant's sandboxes ({@code search}, {@code list_documents}, {@code llm}, of
   * executions, analyses and replays together) per minute on one replica: a token bucket holding
   * {@link #CALLBACK_BURST_SECONDS} seconds' worth. A callback past it waits its turn, within its
   * cell's wall time.
   */
  CALLBACKS_PER_MINUTE("callbacks_per_minute", 600, 100_000, 10_000_000);

  /** How many seconds' worth of callbacks the bucket of {@link #CALLBACKS_PER_MINUTE} holds. */
  public static final int CALLBACK_BURST_SECONDS = 10;

  private final String wireName;
  private final long builtInDefault;
  private final long builtInMaximum;
  private final long hardLimit;

  Quota(String wireName, long builtInDefault, long builtInMaximum, long hardLimit) {
    this.wireName = wireName;
    this.builtInDefault = builtInDefault;
    this.builtInMaximum = builtInMaximum;
    this.hardLimit = hardLimit;
  }

  /** The name in API messages and admin requests, and (upper-cased) in the environment. */
  public String wireName() {
    return wireName;
  }

  public String envName() {
    return "QUARRY_QUOTA_" + name();
  }

  public long builtInDefault() {
    return builtInDefault;
  }

  public long builtInMaximum() {
    return builtInMaximum;
  }

  public long hardLimit() {
    return hardLimit;
  }
}
