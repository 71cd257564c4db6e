package dev.quarry.telemetry;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntSupplier;

/**
 * Every meter Quarry defines itself, in one place, so that names, units and labels stay consistent
 * and the monitoring rules have one list to agree with. Vert.x's own meters (HTTP server and
 * client, pools) and the JVM's land in the same registry.
 *
 * <p>Label values are always drawn from small closed sets (statuses, outcomes, kinds, source
 * types): never tenant ids, document ids or free text, which would give Prometheus one series per
 * value. Each method says where it is meant to be called from.
 */
public final class QuarryMetrics {
  /** Seconds buckets for request-scale latencies: 5 ms to 2 minutes. */
  private static final Duration[] LATENCY_SLOS = {
      Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25), Duration.ofMillis(50),
      Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1),
      Duration.ofMillis(2500), Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(30),
      Duration.ofSeconds(60), Duration.ofSeconds(120)};
  /** Analyses run for minutes: 1 s to 30 minutes. */
  private static final Duration[] ANALYSIS_SLOS = {
      Duration.ofSeconds(1), Duration.ofSeconds(5), Duration.ofSeconds(15), Duration.ofSeconds(30),
      Duration.ofSeconds(60), Duration.ofSeconds(120), Duration.ofSeconds(300), Duration.ofSeconds(600),
      Duration.ofSeconds(1200), Duration.ofSeconds(1800)};

  private static final double[] LATENCY_NANOS = java.util.Arrays.stream(LATENCY_SLOS)
      .mapToDouble(d -> (double) d.toNanos()).toArray();

  private final PrometheusMeterRegistry registry;
  private final Map<String, AtomicInteger> dependencies = new ConcurrentHashMap<>();
  private final AtomicInteger sandboxesActive = new AtomicInteger();
  private final AtomicInteger analysesRunning = new AtomicInteger();
  private final AtomicReference<IntSupplier> warmPoolReady = new AtomicReference<>(() -> 0);
  private final AtomicReference<IntSupplier> sandboxLimit = new AtomicReference<>(() -> 0);
  private final AtomicReference<IntSupplier> sandboxesLive = new AtomicReference<>(() -> 0);
  private final AtomicReference<IntSupplier> sandboxWaiters = new AtomicReference<>(() -> 0);
  private boolean registered;

  public QuarryMetrics() {
    this(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
  }

  public QuarryMetrics(PrometheusMeterRegistry registry) {
    this.registry = registry;
    // Vert.x's timers get the same few latency buckets as ours (the le="1.0" the SLO rules read),
    // instead of Micrometer's 70-odd default ones per series.
    registry.config().meterFilter(new MeterFilter() {
      @Override
      public DistributionStatisticConfig configure(Meter.Id id, DistributionStatisticConfig config) {
        if (id.getType() == Meter.Type.TIMER && id.getName().startsWith("vertx")) {
          return DistributionStatisticConfig.builder().serviceLevelObjectives(LATENCY_NANOS).build().merge(config);
        }
        return config;
      }
    });
    // A request's method is whatever token its client sent (answered 405), so as a label it would
    // let anyone, without a key, add series until a scrape runs out of memory (red team R6-2).
    registry.config().meterFilter(MeterFilter.replaceTagValues(METHOD_TAG,
        method -> METHODS.contains(method) ? method : "OTHER"));
  }

  /** The tag Vert.x gives an HTTP request's method ({@code Label.HTTP_METHOD}). */
  static final String METHOD_TAG = io.vertx.micrometer.Label.HTTP_METHOD.toString();
  /** The methods kept as themselves in the method tag; any other is {@code OTHER}. */
  static final java.util.Set<String> METHODS =
      java.util.Set.of("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT");

  /**
   * ReadinessChecks, after each probe: 1 when the named dependency answered, 0 when it did not. The
   * alerts on a dependency being down read this, so the gateway probes on a timer too.
   */
  public void dependencyUp(String check, boolean up) {
    dependencies.computeIfAbsent(label(check), name -> {
      AtomicInteger value = new AtomicInteger();
      Gauge.builder("quarry_dependency_up", value, AtomicInteger::get)
          .description("1 when the gateway's last probe of a dependency succeeded")
          .tag("check", name).register(registry);
      return value;
    }).set(up ? 1 : 0);
  }

  /**
   * Binds the JVM meters and registers Quarry's series at zero, so that dashboards and alerts see
   * zeros rather than no series at all. Done at the first scrape, not in the constructor: Vert.x
   * adds its meter filters to the registry when it starts, and filters must come before meters.
   */
  private synchronized void registerOnce() {
    if (registered) {
      return;
    }
    registered = true;
    new JvmMemoryMetrics().bindTo(registry);
    new JvmGcMetrics().bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ClassLoaderMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    Gauge.builder("quarry_sandboxes_active", sandboxesActive, AtomicInteger::get)
        .description("Sandboxes currently attached to an analysis or execution session")
        .register(registry);
    Gauge.builder("quarry_analyses_running", analysesRunning, AtomicInteger::get)
        .description("Analyses currently running on this gateway")
        .register(registry);
    // The label values chosen are the ones the rules and dashboard query.
    for (String status : new String[] {"created", "replaced", "unchanged"}) {
      ingestDocuments(status);
    }
    ingestFailures("internal");
    Counter.builder("quarry_analyses_started").description("Analyses started").register(registry);
    for (String reason : new String[] {"launch", "exhausted", "timeout"}) {
      sandboxStartFailures(reason);
    }
    for (String reason : new String[] {"oom", "timeout"}) {
      sandboxKills(reason);
    }
    for (String outcome : new String[] {"success", "failure"}) {
      imagePulls(outcome);
      imagePullTimer(outcome);
    }
    Gauge.builder("quarry_sandbox_warm_pool_size", () -> warmPoolReady.get().getAsInt())
        .description("Warm sandboxes ready to be taken").register(registry);
    Gauge.builder("quarry_sandbox_limit_sandboxes", () -> sandboxLimit.get().getAsInt())
        .description("The most sandbox containers this gateway keeps at once (QUARRY_SANDBOX_MAX_ACTIVE)")
        .register(registry);
    Gauge.builder("quarry_sandbox_live_sandboxes", () -> sandboxesLive.get().getAsInt())
        .description("Sandbox containers counted against the limit: in use, warm, starting or being removed")
        .register(registry);
    Gauge.builder("quarry_sandbox_waiting_requests", () -> sandboxWaiters.get().getAsInt())
        .description("Requests waiting for a sandbox slot to come free").register(registry);
    modelErrors("agent", "server_error");
    modelRetries("server_error");
    analysisMeters("succeeded");
    analysisMeters("failed");
    coldStartTimer();
    acquireTimer(true);
    acquireTimer(false);
    cellMeters("ok");
    cellMeters("error");
    callbackTimer("search", "ok");
    searchTimer("success");
    searchTimer("failure");
    searchResults();
    modelMeters("agent");
  }

  public PrometheusMeterRegistry registry() {
    return registry;
  }

  /** The Prometheus text exposition, for {@code GET /metrics}. */
  public String scrape() {
    registerOnce();
    return registry.scrape();
  }

  // ---------------------------------------------------------------- ingestion (IngestService)

  /** IngestService, once per ingest that stored or recognised a document. */
  public void ingested(String status, String sourceType, int chunks, long bytes, long nanos) {
    ingestDocuments(status).increment();
    Counter.builder("quarry_ingest_chunks").description("Chunks written by ingestion")
        .register(registry).increment(chunks);
    Counter.builder("quarry_ingest_bytes").description("Source bytes received by ingestion")
        .baseUnit("bytes").tag("source_type", label(sourceType)).register(registry).increment(bytes);
    ingestTimer("success").record(nanos, TimeUnit.NANOSECONDS);
  }

  /** IngestService, once per ingest refused or failed; reason is IngestException's reason or "internal". */
  public void ingestFailed(String reason, long nanos) {
    ingestFailures(reason).increment();
    ingestTimer("failure").record(nanos, TimeUnit.NANOSECONDS);
  }

  private Counter ingestDocuments(String status) {
    return Counter.builder("quarry_ingest_documents").description("Documents ingested, by outcome")
        .tag("status", label(status)).register(registry);
  }

  private Counter ingestFailures(String reason) {
    return Counter.builder("quarry_ingest_failures").description("Ingests refused or failed, by reason")
        .tag("reason", label(reason)).register(registry);
  }

  private Timer ingestTimer(String outcome) {
    return Timer.builder("quarry_ingest_duration").description("Time to ingest one document")
        .tag("outcome", outcome).serviceLevelObjectives(LATENCY_SLOS).register(registry);
  }

  // ---------------------------------------------------------------- search (SearchService)

  /** SearchService, once per hybrid search that answered (from the API or from a sandbox). */
  public void searched(int results, long nanos) {
    searchTimer("success").record(nanos, TimeUnit.NANOSECONDS);
    searchResults().record(results);
  }

  private Timer searchTimer(String outcome) {
    return Timer.builder("quarry_search_duration").description("Time to answer one hybrid search")
        .tag("outcome", outcome).serviceLevelObjectives(LATENCY_SLOS).register(registry);
  }

  private DistributionSummary searchResults() {
    return DistributionSummary.builder("quarry_search_results").description("Results returned per search")
        .serviceLevelObjectives(1, 3, 5, 10, 20, 50, 100).register(registry);
  }

  /** SearchService, once per search that failed (bad input included). */
  public void searchFailed(long nanos) {
    searchTimer("failure").record(nanos, TimeUnit.NANOSECONDS);
  }

  /**
   * Search, once per full-text ranking: {@code source} is {@code memory} when the gateway's copy of
   * the tenant's postings ranked it, {@code database} when PostgreSQL did.
   */
  public void fullTextRanked(String source) {
    Counter.builder("quarry_search_fulltext_rankings").description("Full-text rankings, by where they ran")
        .tag("source", source).register(registry).increment();
  }

  /**
   * Search, once per vector ranking: {@code source} is {@code memory} when the gateway's copy of
   * the tenant's vectors ranked it, {@code database} when PostgreSQL did.
   */
  public void vectorRanked(String source) {
    Counter.builder("quarry_search_vector_rankings").description("Vector rankings, by where they ran")
        .tag("source", source).register(registry).increment();
  }

  /**
   * Search, once per expansion of fused hits into results: {@code source} is {@code memory} when
   * the gateway's copy of the tenant's hit contexts served it, {@code database} when PostgreSQL did.
   */
  public void contextsExpanded(String source) {
    Counter.builder("quarry_search_context_expansions").description("Expansions of fused hits, by where they ran")
        .tag("source", source).register(registry).increment();
  }

  /** Search, once at start-up: the heap its copies of tenants' postings and vectors take. */
  public void termIndexBytes(java.util.function.LongSupplier bytes) {
    // Held strongly: the supplier is a method reference made for this call, which nothing else
    // holds, and a gauge's weak reference would read NaN after the first collection.
    Gauge.builder("quarry_search_term_index_bytes", bytes, s -> (double) s.getAsLong()).baseUnit("bytes")
        .strongReference(true)
        .description("Heap reserved for copies of tenants' BM25 postings and vectors").register(registry);
  }

  /** Search, once at start-up: how many copies of tenants' data are being built now. */
  public void copyBuilds(java.util.function.IntSupplier builds) {
    Gauge.builder("quarry_search_copy_builds", builds, s -> (double) s.getAsInt())
        .strongReference(true)
        .description("Copies of tenants' search data being built (many for long after a start: tenants"
            + " search in the database meanwhile)").register(registry);
  }

  // ---------------------------------------------------------------- analyses (agent loop)

  /** The agent loop, when an analysis is accepted and starts running. */
  public void analysisStarted() {
    Counter.builder("quarry_analyses_started").description("Analyses started").register(registry).increment();
    analysesRunning.incrementAndGet();
  }

  /** A running analysis taken over from a replica that died or handed it off, {@code nanos} after it was claimed. */
  public void analysisTakenOver(long nanos) {
    Timer.builder("quarry_analysis_takeover_seconds")
        .description("From claiming an analysis no live replica held to its loop starting here (its rebuild follows)")
        .register(registry).record(Duration.ofNanos(nanos));
  }

  /** A running analysis this replica handed off (it drains): it runs no longer here, and ends elsewhere. */
  public void analysisHandedOff() {
    analysesRunning.decrementAndGet();
    Counter.builder("quarry_analyses_handed_off").description("Running analyses handed off to another replica"
        + " by a draining one").register(registry).increment();
  }

  /**
   * The agent loop, exactly once per started analysis, when its final status is recorded.
   *
   * @param status the recorded status: succeeded, failed, cancelled, budget_exceeded, … (a closed set)
   * @param steps  model turns the analysis took
   */
  public void analysisFinished(String status, Duration duration, int steps) {
    analysesRunning.decrementAndGet();
    AnalysisMeters m = analysisMeters(status);
    m.finished().increment();
    m.duration().record(duration);
    m.steps().record(steps);
  }

  private record AnalysisMeters(Counter finished, Timer duration, DistributionSummary steps) {}

  private AnalysisMeters analysisMeters(String status) {
    return new AnalysisMeters(
        Counter.builder("quarry_analyses_finished").description("Analyses finished, by final status")
            .tag("status", label(status)).register(registry),
        Timer.builder("quarry_analysis_duration").description("Wall time of one analysis, start to final status")
            .tag("status", label(status)).serviceLevelObjectives(ANALYSIS_SLOS).register(registry),
        DistributionSummary.builder("quarry_analysis_steps").description("Model turns per analysis")
            .serviceLevelObjectives(1, 2, 4, 8, 16, 32, 64).register(registry));
  }

  // ---------------------------------------------------------------- sandboxes (sandbox package)

  /** ContainerLauncher/WarmPool, after a container was created and its runner answered. */
  public void sandboxColdStart(Duration duration) {
    coldStartTimer().record(duration);
  }

  private Timer coldStartTimer() {
    return Timer.builder("quarry_sandbox_cold_start_duration")
        .description("Time from container create to a runner that answers")
        .serviceLevelObjectives(LATENCY_SLOS).register(registry);
  }

  /**
   * The session/analysis code, when it got a sandbox for its work.
   *
   * @param warm whether the warm pool had one ready (otherwise it was started cold)
   */
  public void sandboxAcquired(boolean warm, Duration waited) {
    acquireTimer(warm).record(waited);
    sandboxesActive.incrementAndGet();
  }

  private Timer acquireTimer(boolean warm) {
    return Timer.builder("quarry_sandbox_acquire_duration").description("Time to get a sandbox for an analysis")
        .tag("source", warm ? "warm" : "cold").serviceLevelObjectives(LATENCY_SLOS).register(registry);
  }

  /** The session/analysis code, when it gives a sandbox back (removed); pairs with {@link #sandboxAcquired}. */
  public void sandboxReleased() {
    sandboxesActive.decrementAndGet();
  }

  /**
   * The session/analysis code, when no sandbox could be had. reason: "launch" (the engine failed),
   * "exhausted" (no capacity left), "timeout" (runner never answered).
   */
  public void sandboxStartFailed(String reason) {
    sandboxStartFailures(reason).increment();
  }

  private Counter sandboxStartFailures(String reason) {
    return Counter.builder("quarry_sandbox_start_failures").description("Sandboxes that could not be had, by reason")
        .tag("reason", label(reason)).register(registry);
  }

  /**
   * SandboxHealth, after each pull of the sandbox image (its engine lacked it): whether it succeeded,
   * and how long it took (a failed one until it failed or timed out).
   */
  public void sandboxImagePull(boolean succeeded, Duration took) {
    String outcome = succeeded ? "success" : "failure";
    imagePulls(outcome).increment();
    imagePullTimer(outcome).record(took);
  }

  private Counter imagePulls(String outcome) {
    return Counter.builder("quarry_sandbox_image_pulls").description("Pulls of the sandbox image into the engine, by outcome")
        .tag("outcome", outcome).register(registry);
  }

  private Timer imagePullTimer(String outcome) {
    return Timer.builder("quarry_sandbox_image_pull_duration").description("Time to pull the sandbox image, by outcome")
        .tag("outcome", outcome).serviceLevelObjectives(Duration.ofSeconds(1), Duration.ofSeconds(5),
            Duration.ofSeconds(15), Duration.ofSeconds(30), Duration.ofSeconds(60), Duration.ofSeconds(120),
            Duration.ofSeconds(300), Duration.ofSeconds(600)).register(registry);
  }

  /** WarmPool's owner, once: how to count ready containers across all tenants, read at each scrape. */
  public void warmPoolSize(IntSupplier ready) {
    warmPoolReady.set(ready);
  }

  /** SandboxService, once: its capacity limit, the slots taken and the requests waiting for one. */
  public void sandboxCapacity(IntSupplier limit, IntSupplier live, IntSupplier waiting) {
    sandboxLimit.set(limit);
    sandboxesLive.set(live);
    sandboxWaiters.set(waiting);
  }

  /**
   * The code that runs a cell, when it ends.
   *
   * @param outcome ok, error (the code raised), timeout, oom, cancelled (a closed set)
   */
  public void cellFinished(String outcome, Duration duration) {
    CellMeters m = cellMeters(outcome);
    m.cells().increment();
    m.duration().record(duration);
  }

  private record CellMeters(Counter cells, Timer duration) {}

  private CellMeters cellMeters(String outcome) {
    return new CellMeters(
        Counter.builder("quarry_sandbox_cells").description("Cells run in sandboxes, by outcome")
            .tag("outcome", label(outcome)).register(registry),
        Timer.builder("quarry_sandbox_cell_duration").description("Time to run one cell")
            .tag("outcome", label(outcome)).serviceLevelObjectives(LATENCY_SLOS).register(registry));
  }

  /** The sandbox code, when a container is killed: reason "oom" (the kernel did) or "timeout" (we did). */
  public void sandboxKilled(String reason) {
    sandboxKills(reason).increment();
  }

  private Counter sandboxKills(String reason) {
    return Counter.builder("quarry_sandbox_kills").description("Sandbox containers killed, by reason")
        .tag("reason", label(reason)).register(registry);
  }

  // ---------------------------------------------------------------- HTTP protocol

  /**
   * The guarded HTTP server (both ports), once per request it refuses for breaking HTTP itself: code
   * is the error code it answers (invalid_host, malformed_request, malformed_chunked_body,
   * uri_too_long, headers_too_large, transfer_coding_not_implemented, http_version_not_supported).
   */
  public void protocolError(String code) {
    Counter.builder("quarry_http_protocol_errors").description("Requests refused for breaking HTTP, by error code")
        .tag("code", label(code)).register(registry).increment();
  }

  // ---------------------------------------------------------------- callbacks (sandbox → gateway)

  /** The callback server, once per tool call a sandbox makes: kind search, llm, documents, … */
  public void callback(String kind, String outcome, Duration duration) {
    callbackTimer(kind, outcome).record(duration);
  }

  private Timer callbackTimer(String kind, String outcome) {
    return Timer.builder("quarry_callback_duration").description("Callbacks from sandboxes to the gateway, by kind")
        .tag("kind", label(kind)).tag("outcome", label(outcome)).serviceLevelObjectives(LATENCY_SLOS)
        .register(registry);
  }

  // ---------------------------------------------------------------- model calls (agent loop, llm())

  /**
   * The model client, once per completed call (after its retries).
   *
   * @param purpose "agent" for the loop's turns, "llm" for a sandbox's llm() call
   */
  public void modelCall(String purpose, Duration duration, long tokensIn, long tokensOut) {
    ModelMeters m = modelMeters(purpose);
    m.duration().record(duration);
    m.tokensIn().increment(tokensIn);
    m.tokensOut().increment(tokensOut);
  }

  private record ModelMeters(Timer duration, Counter tokensIn, Counter tokensOut) {}

  private ModelMeters modelMeters(String purpose) {
    return new ModelMeters(
        Timer.builder("quarry_model_call_duration").description("Model calls, retries included")
            .tag("purpose", label(purpose)).tag("outcome", "success").serviceLevelObjectives(LATENCY_SLOS)
            .register(registry),
        Counter.builder("quarry_model_tokens").description("Tokens sent to and received from the model")
            .tag("purpose", label(purpose)).tag("direction", "in").register(registry),
        Counter.builder("quarry_model_tokens").description("Tokens sent to and received from the model")
            .tag("purpose", label(purpose)).tag("direction", "out").register(registry));
  }

  /** The model client, each time it retries (429, 5xx, connection reset). */
  public void modelRetry(String kind) {
    modelRetries(kind).increment();
  }

  private Counter modelRetries(String kind) {
    return Counter.builder("quarry_model_retries").description("Model calls retried, by cause")
        .tag("kind", label(kind)).register(registry);
  }

  private Counter modelErrors(String purpose, String kind) {
    return Counter.builder("quarry_model_errors").description("Model calls that failed for good, by kind")
        .tag("purpose", label(purpose)).tag("kind", label(kind)).register(registry);
  }

  /**
   * The model client, once per call that failed for good.
   *
   * @param kind rate_limited, server_error, timeout, connection, bad_response, client_error
   */
  public void modelError(String purpose, String kind, Duration duration) {
    modelErrors(purpose, kind).increment();
    Timer.builder("quarry_model_call_duration").description("Model calls, retries included")
        .tag("purpose", label(purpose)).tag("outcome", "failure").serviceLevelObjectives(LATENCY_SLOS)
        .register(registry).record(duration);
  }

  /** Label values are lower-case identifiers; anything else would be a sign of free text leaking in. */
  private static String label(String value) {
    String v = value == null ? "unknown" : value.toLowerCase(Locale.ROOT);
    if (!v.matches("[a-z0-9_]{1,40}")) {
      throw new IllegalArgumentException("metric label value '" + value + "' is not a short identifier");
    }
    return v;
  }
}
