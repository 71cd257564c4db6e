package dev.quarry.bench;

import com.github.dockerjava.api.DockerClient;
import dev.quarry.agent.AgentSettings;
import dev.quarry.config.Config;
import dev.quarry.gateway.Gateway;
import dev.quarry.gateway.OpsSettings;
import dev.quarry.telemetry.QuarryMetrics;
import dev.quarry.sandbox.ContainerLauncher;
import dev.quarry.sandbox.SandboxSettings;
import dev.quarry.config.Quota;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

/**
 * Analyses end to end against a scripted model: the real gateway in process (PostgreSQL, sandboxes
 * on the real engine, openai-java over HTTP), a model that answers at once. First the gateway's own
 * overhead per agent step, on analyses run one after another; then 100 analyses at once.
 *
 * <p>Overhead per step: for each cell, the span from the model server finishing its tool-call reply
 * to it having received the whole next request of that analysis, minus the cell's run time as the sandbox's
 * runner measured it. What is left is the gateway's: parsing the reply, events and their storage,
 * the gRPC round trip to the sandbox, building and sending the next request. The model's own time
 * is outside the span by construction.
 */
final class AnalysesBench {
  private static final String ADMIN_TOKEN = "bench-admin-token-0123456789";
  private static final List<String> CELLS = List.of(
      "x = sum(range(1000))\nprint(x)",
      "y = [i * i for i in range(100)]\nprint(len(y), x)",
      "print('done', x + len(y))");
  private static final int SEQUENTIAL = Integer.getInteger("bench.analyses.sequential", 30);
  private static final int WARM_UP = Integer.getInteger("bench.analyses.warmup", 300);
  private static final int CONCURRENT = Integer.getInteger("bench.analyses.concurrent", 100);
  private static final double OVERHEAD_TARGET_MS = 5;

  private final Vertx vertx = Vertx.vertx();
  private WebClient client;
  private String key;
  private int asked;

  String run() throws Exception {
    String gatewayId = "bench-analyses-" + UUID.randomUUID().toString().substring(0, 8);
    try (BenchDatabase db = BenchDatabase.fresh("analyses", true)) {
      Path dataDir = Files.createTempDirectory("quarry-bench-analyses");
      Config base = db.config().withHttpPort(0).withDataDir(dataDir);
      Config config = base.withTenancy(base.tenancy().withAdminToken(ADMIN_TOKEN)
          .withDefault(Quota.CONCURRENT_ANALYSES, 1_000).withDefault(Quota.REQUESTS_PER_MINUTE, 1_000_000)
          .withDefault(Quota.CONCURRENT_SANDBOXES, Quota.CONCURRENT_SANDBOXES.hardLimit()));
      BenchModelServer model = new BenchModelServer(vertx, CELLS);
      AgentSettings agent = AgentSettings.fromEnv(Map.of()).withEndpoint(model.baseUrl(), "bench-key", "bench-scripted")
          .withRetries(3, Duration.ofMillis(20), Duration.ofMillis(200), 1_000, Duration.ofSeconds(30));
      SandboxSettings env = SandboxSettings.fromEnv(System.getenv());
      SandboxSettings sandboxes = new SandboxSettings(env.dockerHost(), env.image(), env.command(), env.user(),
          gatewayId, Files.createDirectories(dataDir.resolve("run")), env.limits(), env.maxLimits(),
          env.poolPerTenant(), env.reapInterval(), false,
          // Room for every concurrent analysis: this measures the loop under contention, not the limit.
          Math.max(env.maxActive(), Math.min(SandboxSettings.MAX_ACTIVE_BOUND, CONCURRENT + 16)), env.maxWait(),
          // One tenant alone: it may use the whole gateway.
          env.fairness().withTenantSharePercent(100));
      Gateway gateway = new Gateway(config, OpsSettings.DEFAULTS, new QuarryMetrics(),
          new Gateway.AgentWiring(agent, sandboxes));
      StringBuilder md = new StringBuilder();
      try {
        String deployment = vertx.deployVerticle(gateway).await();
        client = WebClient.create(vertx, new WebClientOptions().setDefaultHost("127.0.0.1")
            .setDefaultPort(gateway.port()).setIdleTimeout(0),
            new io.vertx.core.http.PoolOptions().setHttp1MaxSize(CONCURRENT + 10));
        String tenant = tenantId("analyses");
        key = key(tenant);
        // Warm-up: class loading and the JIT of every path a step takes. A serving gateway runs its
        // steps compiled; 20 analyses (60 steps) left most of the path interpreted or C1-compiled and
        // measured 11.5 ms a step where 300 (900 steps, about a minute) measured 5.5 ms.
        for (int i = 0; i < WARM_UP; i++) {
          analyse();
        }
        model.reset();

        // 1. One analysis at a time: the overhead of a step on an otherwise idle gateway. Taking a
        // sandbox from the pool starts its replacement: hundreds of ms of engine and interpreter work
        // on these two cores. A real model's first turn outlasts that; the scripted model answers at
        // once, so its first turn waits until the pool is full again, or every measured step would
        // share the cores with a container start that a real analysis' steps never meet.
        model.firstTurnWaitsFor(() -> gateway.sandboxes().warm(UUID.fromString(tenant)));
        String loadBefore = loadAverage();
        List<Double> sequentialMs = new ArrayList<>();
        Map<String, long[]> cellMs = new HashMap<>();
        Map<String, long[]> roundTripMs = new HashMap<>();
        for (int i = 0; i < SEQUENTIAL; i++) {
          settle(gateway, UUID.fromString(tenant), sandboxes.poolPerTenant());
          Outcome o = analyse();
          sequentialMs.add(o.durationMs());
          check(o);
          cellMs.put(o.question(), o.cellMs());
          roundTripMs.put(o.question(), o.roundTripMs());
        }
        Overhead solo = overhead(model.gaps(), cellMs, SEQUENTIAL);
        String byCell = overheadByCell(model.gaps(), cellMs);
        // The same spans less the whole sandbox round trip as the gateway's events time it (ms clock).
        Overhead outsideSandbox = overhead(model.gaps(), roundTripMs, SEQUENTIAL);
        Percentiles roundTrip = Percentiles.of(roundTripMs.values().stream().flatMapToLong(java.util.Arrays::stream)
            .mapToDouble(v -> v).toArray());
        Percentiles soloDuration = Percentiles.of(sequentialMs.stream().mapToDouble(Double::doubleValue).toArray());
        Percentiles modelService = Percentiles.of(model.serviceNanos().stream().mapToDouble(n -> n / 1e6).toArray());
        model.reset();

        // 2. Many at once: no think time; every start, refill and removal contends with the steps.
        model.firstTurnWaitsFor(Future::succeededFuture);
        long heapBefore = heapAfterGc();
        cellMs.clear();
        List<Future<Outcome>> runs = new ArrayList<>();
        List<Double> durations = new java.util.concurrent.CopyOnWriteArrayList<>();
        long start = System.nanoTime();
        for (int i = 0; i < CONCURRENT; i++) {
          runs.add(analyseAsync(false).onSuccess(o -> durations.add(o.durationMs())));
        }
        int failures = 0;
        List<String> failureNotes = new ArrayList<>();
        for (Future<Outcome> f : runs) {
          try {
            Outcome o = f.await();
            if (!"succeeded".equals(o.status()) || o.cellMs().length != CELLS.size()) {
              failures++;
              failureNotes.add(o.status());
            } else {
              cellMs.put(o.question(), o.cellMs());
            }
          } catch (RuntimeException e) {
            failures++;
            failureNotes.add(e.toString());
          }
        }
        double wallSeconds = (System.nanoTime() - start) / 1e9;
        Overhead loaded = overhead(model.gaps(), cellMs, CONCURRENT);
        Percentiles concurrent = Percentiles.of(durations.stream().mapToDouble(Double::doubleValue).toArray());
        long heapAfter = heapAfterGc();
        String loadAtEnd = loadAverage();
        // The gateway closes every sandbox as each analysis ends: none of its containers may be left.
        // Every analysis closes its sandbox as it ends: all that may remain while the gateway runs is
        // the tenant's warm pool, and nothing once it has stopped.
        int pooled = env.poolPerTenant();
        int whileRunning = containers(sandboxes.dockerHost(), gatewayId);
        vertx.undeploy(deployment).await();
        int leftover = containers(sandboxes.dockerHost(), gatewayId);

        System.out.printf(Locale.ROOT, "  overhead per step alone: p50 %.2f ms, p99 %.2f ms (%d steps)%n",
            solo.ms().p50(), solo.ms().p99(), solo.ms().count());
        System.out.printf(Locale.ROOT, "  %d concurrent: %.1f s, %d failures, p50 %.0f ms, p99 %.0f ms, leftover %d%n",
            CONCURRENT, wallSeconds, failures, concurrent.p50(), concurrent.p99(), leftover);

        md.append(String.format(Locale.ROOT, """
            Analyses against a scripted OpenAI-compatible model (a local Vert.x server that replies at once),
            through the whole gateway in process: HTTP API with an API key, PostgreSQL, one sandbox container
            per analysis on the real engine (image `%s`, warm pool of %d per tenant), openai-java over HTTP.
            Each analysis runs %d cells (trivial Python, so that the cell time is small) and then answers.
            The bench's client and model server share the gateway's JVM and the machine's 2 cores.
            %d untimed analyses (one at a time) warm the JVM first, so that the steps run JIT-compiled as on
            a serving gateway. In the one-at-a-time phase each analysis starts once the warm pool is full
            again and the previous analysis' container is removed, and the model's first turn (outside
            every measured span) is answered only once the pool has replaced the sandbox the analysis took,
            as a real model's first turn of hundreds of ms would let it: so a container start or removal
            (hundreds of ms of engine and interpreter work on these two cores) does not run beside the
            measured steps. The concurrent phase keeps all of that contention.

            **Gateway overhead per agent step** = the span from the model server finishing a tool-call reply
            to it having received the whole of the next request of the same analysis (its body's last byte,
            not its headers: until then no model can start), minus the cell's run time as the runner
            in the sandbox measured it (whole milliseconds, so the overhead reads up to 1 ms high). It covers
            parsing the reply, emitting and storing events and the step, the gRPC round trip to the sandbox and
            back, and building and sending the next model request; the model's time is outside it by construction.
            (Before 2026-11-30 the span ended at the next request's headers: that left out the ~40 ms a request
            body's tail waited on Nagle's algorithm and a delayed ACK, which the model client no longer does.)

            | phase | steps | overhead p10 ms | p50 ms | p95 ms | p99 ms | mean ms | span p50 ms (incl. cell) |
            |---|---:|---:|---:|---:|---:|---:|---:|
            %s
            %s

            Of the overhead alone, the sandbox round trip (the gateway's `code` event to its `cell_result` event, ms
            clock: gRPC to the runner, the runner's own work around the cell, the cell, the result back) is p50
            %.0f ms, p99 %.0f ms; the span less that round trip (the agent loop itself: the model reply's parsing,
            events, building and sending the next request) is p50 %.2f ms, p99 %.2f ms.

            | measurement | value |
            |---|---|
            | analyses one at a time: duration p50 / p99, the first turn's wait for the pool included | %.0f ms / %.0f ms (%d analyses) |
            | overhead per step alone, p50 of the 1st / 2nd / 3rd cell of an analysis | %s ms |
            | scripted model server's own time per request (whole request in to reply sent) p50 / p99 | %.2f ms / %.2f ms |
            | %d concurrent analyses: wall time | %.1f s |
            | throughput | %.1f analyses/s (%.1f steps/s) |
            | duration p50 / p99 | %.0f ms / %.0f ms |
            | failures | %d%s |
            | containers with this gateway's label after the run, gateway still up (its warm pool holds up to %d) | %d |
            | containers with this gateway's label after the gateway stopped | %d |
            | heap used after a full GC, before / after the concurrent run | %.0f MiB / %.0f MiB (bench client and model server included) |

            - load average of the machine (1, 5, 15 min) as the one-at-a-time phase began: %s; at the end: %s
              (two cores: a load over 2 means threads queue for a CPU, and a step hands work from thread to
              thread about ten times, so on a busy machine the p50 measures the queueing as much as the
              gateway; p10 is the closer figure for what the path itself costs)
            - overhead per step, alone, p50 %.2f ms (target ≤ %.0f ms): %s
            - 100 concurrent analyses with zero failures and no containers left: %s

            """,
            sandboxes.image(), pooled, CELLS.size(), WARM_UP,
            solo.row("one analysis at a time"), loaded.row(CONCURRENT + " analyses at once"),
            roundTrip.p50(), roundTrip.p99(), outsideSandbox.ms().p50(), outsideSandbox.ms().p99(),
            soloDuration.p50(), soloDuration.p99(), SEQUENTIAL, byCell,
            modelService.p50(), modelService.p99(),
            CONCURRENT, wallSeconds,
            CONCURRENT / wallSeconds, CONCURRENT * CELLS.size() / wallSeconds,
            concurrent.p50(), concurrent.p99(),
            failures, failureNotes.isEmpty() ? "" : " (" + String.join("; ", failureNotes.subList(0,
                Math.min(5, failureNotes.size()))) + ")",
            pooled, whileRunning, leftover,
            heapBefore / 1048576.0, heapAfter / 1048576.0,
            loadBefore, loadAtEnd,
            solo.ms().p50(), OVERHEAD_TARGET_MS, solo.ms().p50() <= OVERHEAD_TARGET_MS ? "MET" : "NOT MET",
            failures == 0 && whileRunning <= pooled && leftover == 0 && CONCURRENT >= 100 ? "MET" : "NOT MET"));
      } finally {
        try {
          model.close();
        } finally {
          vertx.close().await();
        }
      }
      return md.toString();
    }
  }

  /** One analysis as the API returned it: its question, status and each cell's run time. */
  private record Outcome(String question, String status, long[] cellMs, double durationMs, long[] roundTripMs) {}

  /** {@code p10}: a step that hardly waited for a CPU, what the path costs on a quiet machine. */
  private record Overhead(Percentiles ms, double p10, Percentiles spanMs, int missing) {
    String row(String phase) {
      return String.format(Locale.ROOT, "| %s | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |", phase, ms.count(),
          p10, ms.p50(), ms.p95(), ms.p99(), ms.mean(), spanMs.p50());
    }
  }

  /** Each gap minus the run time of the cell it contained (the cellsDone-th). */
  private static Overhead overhead(List<BenchModelServer.Gap> gaps, Map<String, long[]> cellMs, int analyses) {
    List<Double> overhead = new ArrayList<>();
    List<Double> spans = new ArrayList<>();
    for (BenchModelServer.Gap g : gaps) {
      long[] cells = cellMs.get(g.conversation());
      if (cells == null || g.cellsDone() < 1 || g.cellsDone() > cells.length) {
        continue;
      }
      double spanMs = g.nanos() / 1e6;
      spans.add(spanMs);
      overhead.add(spanMs - cells[g.cellsDone() - 1]);
    }
    double[] sorted = overhead.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    return new Overhead(Percentiles.of(sorted), sorted.length == 0 ? Double.NaN : Percentiles.rank(sorted, 10),
        Percentiles.of(spans.stream().mapToDouble(Double::doubleValue).toArray()),
        analyses * CELLS.size() - overhead.size());
  }

  /** The overhead's p50 for each cell position ("4.21 / 4.02 / 3.59"): a cold first step shows here. */
  private static String overheadByCell(List<BenchModelServer.Gap> gaps, Map<String, long[]> cellMs) {
    List<String> out = new ArrayList<>();
    for (int cell = 1; cell <= CELLS.size(); cell++) {
      int position = cell;
      double[] ms = gaps.stream()
          .filter(g -> g.cellsDone() == position && cellMs.containsKey(g.conversation()))
          .mapToDouble(g -> g.nanos() / 1e6 - cellMs.get(g.conversation())[position - 1])
          .toArray();
      out.add(ms.length == 0 ? "-" : String.format(Locale.ROOT, "%.2f", Percentiles.of(ms).p50()));
    }
    return String.join(" / ", out);
  }

  private Outcome analyse() {
    return analyseAsync(true).await();
  }

  /**
   * Posts one analysis and waits for its end (the non-streaming POST answers when it is over); then
   * reads its steps and, when asked, its events, after the timed part.
   */
  private Future<Outcome> analyseAsync(boolean withEvents) {
    String question = "bench analysis " + (asked++) + ": what do the cells print?";
    long start = System.nanoTime();
    return client.post("/v1/analyses").bearerTokenAuthentication(key)
        .sendJsonObject(new JsonObject().put("question", question)
            .put("budgets", new JsonObject().put("wall_time_ms", 600_000)))
        .compose(r -> {
          double durationMs = (System.nanoTime() - start) / 1e6;
          if (r.statusCode() != 200) {
            return Future.failedFuture(new IllegalStateException("POST /v1/analyses: " + r.statusCode() + " "
                + r.bodyAsString()));
          }
          String id = r.bodyAsJsonObject().getString("id");
          Future<long[]> roundTrips = withEvents
              ? client.get("/v1/analyses/" + id + "/events").bearerTokenAuthentication(key).send()
                  .map(e -> roundTrips(e.bodyAsString()))
              : Future.succeededFuture(new long[0]);
          return roundTrips.compose(trips -> client.get("/v1/analyses/" + id).bearerTokenAuthentication(key).send()
              .map(a -> {
                JsonObject analysis = a.bodyAsJsonObject();
                JsonArray steps = analysis.getJsonArray("steps", new JsonArray());
                long[] cells = new long[steps.size()];
                for (int i = 0; i < cells.length; i++) {
                  cells[i] = steps.getJsonObject(i).getLong("duration_ms", 0L);
                }
                // The model server keys conversations by the first user message: "Question: " and the question.
                return new Outcome("Question: " + question, analysis.getString("status"), cells, durationMs, trips);
              }));
        });
  }

  /** Per step, the gateway's clock from its code event to its cell_result event: the sandbox round trip. */
  private static long[] roundTrips(String sse) {
    Map<Integer, Long> code = new HashMap<>();
    List<Long> out = new ArrayList<>();
    for (String line : sse.split("\n")) {
      if (!line.startsWith("data: ")) {
        continue;
      }
      JsonObject e = new JsonObject(line.substring(6));
      long at = java.time.Instant.parse(e.getString("at")).toEpochMilli();
      if ("code".equals(e.getString("type"))) {
        code.put(e.getInteger("step"), at);
      } else if ("cell_result".equals(e.getString("type")) && code.containsKey(e.getInteger("step"))) {
        out.add(at - code.get(e.getInteger("step")));
      }
    }
    return out.stream().mapToLong(Long::longValue).toArray();
  }

  private static void check(Outcome o) {
    if (!"succeeded".equals(o.status()) || o.cellMs().length != CELLS.size()) {
      throw new IllegalStateException("analysis '" + o.question() + "' ended " + o.status() + " with "
          + o.cellMs().length + " steps");
    }
  }

  private static int containers(String dockerHost, String gatewayId) throws java.io.IOException {
    try (DockerClient docker = ContainerLauncher.connect(dockerHost)) {
      return docker.listContainersCmd().withShowAll(true)
          .withLabelFilter(Map.of(ContainerLauncher.LABEL_GATEWAY, gatewayId)).exec().size();
    }
  }

  private static String loadAverage() {
    try {
      String[] parts = Files.readString(Path.of("/proc/loadavg")).split(" ");
      return parts[0] + ", " + parts[1] + ", " + parts[2];
    } catch (java.io.IOException | RuntimeException e) {
      return "unknown";
    }
  }

  private static long heapAfterGc() {
    System.gc();
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  /**
   * Before each analysis of the one-at-a-time phase: the warm pool full again and the previous
   * analysis' container removed. On two cores a container start (~200 ms of engine and Python
   * start-up) or removal running beside the measured steps would be counted as their overhead;
   * the concurrent phase keeps that contention in on purpose. Polled: the engine gives no signal
   * for a finished removal; bounded at 30 s.
   */
  private static void settle(Gateway gateway, UUID tenant, int poolSize) throws InterruptedException {
    gateway.sandboxes().warm(tenant).await();
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
    while (gateway.sandboxes().liveSandboxIds().size() > poolSize && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
  }

  private String tenantId(String name) {
    HttpResponse<Buffer> r = client.post("/v1/admin/tenants").bearerTokenAuthentication(ADMIN_TOKEN)
        .sendJsonObject(new JsonObject().put("name", name)).await();
    require(r, 201);
    return r.bodyAsJsonObject().getString("id");
  }

  private String key(String tenantId) {
    HttpResponse<Buffer> r = client.post("/v1/admin/tenants/" + tenantId + "/keys").bearerTokenAuthentication(ADMIN_TOKEN)
        .sendJsonObject(new JsonObject().put("name", "bench")).await();
    require(r, 201);
    return r.bodyAsJsonObject().getString("api_key");
  }

  private static void require(HttpResponse<Buffer> r, int status) {
    if (r.statusCode() != status) {
      throw new IllegalStateException("expected " + status + ", got " + r.statusCode() + ": " + r.bodyAsString());
    }
  }
}
