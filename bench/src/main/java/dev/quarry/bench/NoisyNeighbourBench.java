package dev.quarry.bench;

import dev.quarry.config.Config;
import dev.quarry.gateway.Gateway;
import dev.quarry.gateway.OpsSettings;
import dev.quarry.telemetry.QuarryMetrics;
import dev.quarry.sandbox.SandboxSettings;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The noisy neighbour with sandboxes (issue 14, finding 3): a quiet tenant's search, /readyz and
 * execution (a sandbox started, one search callback, the result), alone and while a noisy tenant
 * (a) floods callbacks from every sandbox it may hold, or (b) holds every sandbox it may and asks
 * for more. The noisy tenant's runner is the tests' hostile one (gateway/src/test/resources/
 * hostile-runner), built on QUARRY_SANDBOX_IMAGE: it does what escaped code could do with the stream.
 */
final class NoisyNeighbourBench {
  private static final String ADMIN_TOKEN = "bench-admin-token-0123456789";
  private static final int ROUNDS = 2;
  private static final int SEARCHES = 20;
  private static final int READYZ = 20;
  private static final int EXECUTIONS = 4;
  private static final int FLOOD_CALLS = 1000;

  private final Vertx vertx = Vertx.vertx();
  private WebClient client;
  private int port;
  private int share;
  private final AtomicLong floodsEnded = new AtomicLong();

  record Phase(List<Double> search, List<Double> readyz, List<Double> execution) {
    Phase() {
      this(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
    }
  }

  String run() throws Exception {
    String image = hostileImage();
    try (BenchDatabase db = BenchDatabase.fresh("neighbours", true)) {
      Path dataDir = Files.createTempDirectory("quarry-bench-neighbours");
      Config base = db.config().withHttpPort(0).withDataDir(dataDir);
      Config config = base.withTenancy(base.tenancy().withAdminToken(ADMIN_TOKEN)
          .withDefault(dev.quarry.config.Quota.REQUESTS_PER_MINUTE, 1_000_000));
      SandboxSettings env = SandboxSettings.fromEnv(System.getenv());
      SandboxSettings sandboxes = new SandboxSettings(env.dockerHost(), image, List.of(), env.user(),
          "bench-neighbours-" + java.util.UUID.randomUUID().toString().substring(0, 8),
          Files.createDirectories(dataDir.resolve("run")), env.limits(), env.maxLimits(), 0, env.reapInterval(),
          false, env.maxActive(), env.maxWait(), env.fairness());
      share = sandboxes.fairness().tenantShare(sandboxes.maxActive());
      QuarryMetrics metrics = new QuarryMetrics();
      Gateway gateway = new Gateway(config, OpsSettings.DEFAULTS, metrics, new Gateway.AgentWiring(null, sandboxes));
      try {
        vertx.deployVerticle(gateway).await();
        port = gateway.port();
        client = WebClient.create(vertx, new WebClientOptions().setDefaultHost("127.0.0.1").setDefaultPort(port));
        String quiet = key(tenantId("quiet"));
        String noisy = key(tenantId("noisy"));
        for (int i = 0; i < 12; i++) {
          ingest(quiet, i);
          ingest(noisy, i);
        }
        measure(quiet, new Phase()); // warm-up: query vectors cached, first containers started

        Phase alone1 = new Phase();
        Phase flooded = new Phase();
        AtomicLong floodOk = new AtomicLong();
        AtomicLong floodRefused = new AtomicLong();
        floodsEnded.set(0);
        double servedBefore = callbacks(metrics, "ok");
        double refusedBefore = callbacks(metrics, "refused");
        for (int round = 0; round < ROUNDS; round++) {
          measure(quiet, alone1);
          HttpClient http = noisyHttp();
          AtomicBoolean on = new AtomicBoolean(true);
          for (int i = 0; i < share; i++) {
            flood(http, noisy, on, floodOk, floodRefused);
          }
          Thread.sleep(1000); // the floods' sandboxes start and their calls come in
          measure(quiet, flooded);
          on.set(false);
          http.close().await(); // the client gone: every flooding sandbox is removed
          awaitIdle(gateway, noisy);
        }

        // Most flooding executions are cut off when their phase ends, so count what the gateway served.
        long served = Math.round(callbacks(metrics, "ok") - servedBefore);
        long budgetRefused = Math.round(callbacks(metrics, "refused") - refusedBefore);
        Phase alone2 = new Phase();
        Phase crowded = new Phase();
        AtomicLong refused = new AtomicLong();
        for (int round = 0; round < ROUNDS; round++) {
          measure(quiet, alone2);
          HttpClient http = noisyHttp();
          for (int i = 0; i < share; i++) {
            hold(http, noisy);
          }
          for (int i = 0; i < 4; i++) {
            // Admitted (it should not be), it would hold its sandbox one second.
            int status = client.post("/v1/executions").bearerTokenAuthentication(noisy)
                .sendJsonObject(new JsonObject().put("code", "#hold")
                    .put("limits", new JsonObject().put("wall_time_ms", 1000))).await().statusCode();
            if (status == 429) {
              refused.incrementAndGet();
            }
          }
          measure(quiet, crowded);
          http.close().await();
          awaitIdle(gateway, noisy);
        }

        StringBuilder md = new StringBuilder();
        md.append(String.format(Locale.ROOT, "%n### With sandboxes: a callback flood and a tenant at its share%n%n"
            + "The quiet tenant's search (`POST /v1/search`), `/readyz` and execution (`POST /v1/executions`: a sandbox"
            + " started, one `search` callback, the result; no warm pool), alone and while the noisy tenant, with the"
            + " hostile runner of the tests, (a) keeps %d executions (its share of %d sandboxes) each sending %d"
            + " `search(limit=100)` callbacks at once, re-sent as they end, or (b) holds its %d sandboxes and asks"
            + " for 4 more per round. %d alternating rounds each; both tenants have the same 12 documents.%n%n",
            share, sandboxes.maxActive(), FLOOD_CALLS, share, ROUNDS));
        md.append("| quiet tenant | alone p50 ms | noisy p50 ms | ratio | alone p95 ms | noisy p95 ms |\n|---|---:|---:|---:|---:|---:|\n");
        row(md, "search, callback flood", alone1.search(), flooded.search());
        row(md, "/readyz, callback flood", alone1.readyz(), flooded.readyz());
        row(md, "execution, callback flood", alone1.execution(), flooded.execution());
        row(md, "search, sandboxes held", alone2.search(), crowded.search());
        row(md, "/readyz, sandboxes held", alone2.readyz(), crowded.readyz());
        row(md, "execution, sandboxes held", alone2.execution(), crowded.execution());
        md.append(String.format(Locale.ROOT, "%n- the flood's callbacks in %d rounds: the gateway served %d and refused %d"
            + " (LimitExceeded) of all its searches, at most %d of the noisy tenant's at once; %d flooding executions"
            + " ended within their phase (%d callbacks ok, %d LimitExceeded), the others were cut off with it%n",
            ROUNDS, served, budgetRefused, sandboxes.fairness().callbacksPerTenant(), floodsEnded.get(), floodOk.get(),
            floodRefused.get()));
        md.append(String.format(Locale.ROOT, "- the tenant at its share: %d of %d more executions refused with 429"
            + " quota_exceeded; every quiet execution was admitted and completed%n", refused.get(), 4 * ROUNDS));
        md.append("- load average (1, 5, 15 min) at the end: " + loadAverage() + "\n");
        System.out.print(md);
        return md.toString();
      } finally {
        vertx.close().await();
      }
    }
  }

  private static void row(StringBuilder md, String what, List<Double> alone, List<Double> noisy) {
    Percentiles a = Percentiles.of(alone.stream().mapToDouble(Double::doubleValue).toArray());
    Percentiles n = Percentiles.of(noisy.stream().mapToDouble(Double::doubleValue).toArray());
    md.append(String.format(Locale.ROOT, "| %s | %.1f | %.1f | x%.2f | %.1f | %.1f |%n", what, a.p50(), n.p50(),
        n.p50() / a.p50(), a.p95(), n.p95()));
  }

  private void measure(String key, Phase phase) {
    for (int i = 0; i < SEARCHES; i++) {
      phase.search().add(timed(() -> check(client.post("/v1/search").bearerTokenAuthentication(key)
          .sendJsonObject(new JsonObject().put("query", "first ferry timetable").put("limit", 10)).await(), 200)));
    }
    for (int i = 0; i < READYZ; i++) {
      phase.readyz().add(timed(() -> check(client.get("/readyz").send().await(), 200)));
    }
    for (int i = 0; i < EXECUTIONS; i++) {
      phase.execution().add(timed(() -> {
        HttpResponse<Buffer> r = check(client.post("/v1/executions").bearerTokenAuthentication(key)
            .sendJsonObject(new JsonObject().put("code", "#search first ferry")).await(), 200);
        if (!r.bodyAsJsonObject().getBoolean("success")) {
          throw new IllegalStateException("the quiet tenant's execution failed: " + r.bodyAsString());
        }
      }));
    }
  }

  /** The noisy tenant's connections: one per sandbox it holds (the default pool has five). */
  private HttpClient noisyHttp() {
    return vertx.createHttpClient(new io.vertx.core.http.PoolOptions().setHttp1MaxSize(4 * share));
  }

  private static double timed(Runnable r) {
    long start = System.nanoTime();
    r.run();
    return (System.nanoTime() - start) / 1e6;
  }

  /** One flooding execution, sent again when it ends while the phase lasts. */
  private void flood(HttpClient http, String key, AtomicBoolean on, AtomicLong ok, AtomicLong refused) {
    if (!on.get()) {
      return;
    }
    http.request(new RequestOptions().setMethod(HttpMethod.POST).setHost("127.0.0.1").setPort(port)
            .setURI("/v1/executions").putHeader("Content-Type", "application/json")
            .putHeader("Authorization", "Bearer " + key))
        .compose(req -> req.send(new JsonObject().put("code", "#flood " + FLOOD_CALLS + " search 100")
            .put("limits", new JsonObject().put("callbacks", FLOOD_CALLS)).encode()))
        .compose(resp -> resp.body())
        .onComplete(ar -> {
          if (ar.succeeded() && ar.result().toJsonObject().containsKey("stdout")) {
            floodsEnded.incrementAndGet();
            String out = ar.result().toJsonObject().getString("stdout", "");
            count(out, "ok=", ok::addAndGet);
            count(out, "LimitExceeded=", refused::addAndGet);
          }
          flood(http, key, on, ok, refused);
        });
  }

  /** Searches the gateway's callback server answered with this outcome so far (every tenant's). */
  private static double callbacks(QuarryMetrics metrics, String outcome) {
    var timer = metrics.registry().find("quarry_callback_duration").tag("kind", "search").tag("outcome", outcome).timer();
    return timer == null ? 0 : timer.count();
  }

  private static void count(String out, String label, Consumer<Long> add) {
    int at = out.indexOf(label);
    if (at >= 0) {
      add.accept(Long.parseLong(out.substring(at + label.length()).split("\\s")[0]));
    }
  }

  private void hold(HttpClient http, String key) throws Exception {
    HttpClientRequest request = http.request(new RequestOptions().setMethod(HttpMethod.POST).setHost("127.0.0.1")
        .setPort(port).setURI("/v1/executions").putHeader("Accept", "text/event-stream")
        .putHeader("Content-Type", "application/json").putHeader("Authorization", "Bearer " + key)).await();
    CompletableFuture<Void> holding = new CompletableFuture<>();
    request.response().onSuccess(response -> response.handler(chunk -> {
      if (chunk.toString().contains("holding")) {
        holding.complete(null);
      }
    }));
    request.send(new JsonObject().put("code", "#hold").put("limits", new JsonObject().put("wall_time_ms", 110_000))
        .encode());
    holding.get(120, TimeUnit.SECONDS);
  }

  /** Until the noisy tenant's sandboxes are all removed, so the next phase starts from the same place. */
  private static void awaitIdle(Gateway gateway, String unused) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (gateway.sandboxes().capacity().used() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
  }

  /** The hostile runner on QUARRY_SANDBOX_IMAGE, tagged with "-hostile". */
  private static String hostileImage() throws Exception {
    String runner = System.getenv().getOrDefault("QUARRY_SANDBOX_IMAGE", "quarry-sandbox:latest");
    String tag = runner + "-hostile";
    Path context = BenchPaths.detect().repoRoot().resolve("gateway/src/test/resources/hostile-runner");
    Process p = new ProcessBuilder("docker", "build", "-q", "--build-arg", "RUNNER_IMAGE=" + runner, "-t", tag, ".")
        .directory(context.toFile()).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes());
    if (!p.waitFor(5, TimeUnit.MINUTES) || p.exitValue() != 0) {
      throw new IllegalStateException("docker build of the hostile runner on " + runner + " failed:\n" + output);
    }
    return tag;
  }

  private static String loadAverage() {
    try {
      String[] parts = Files.readString(Path.of("/proc/loadavg")).split(" ");
      return parts[0] + ", " + parts[1] + ", " + parts[2];
    } catch (java.io.IOException | RuntimeException e) {
      return "unknown";
    }
  }

  private void ingest(String key, int i) {
    String content = "# Ferry notes " + i + "\n\n## Timetable\n\nThe first ferry leaves at 06:" + (10 + i)
        + ". Harbour dues for cargo vessels are " + (100 + i) + " crowns.\n\n## Crew\n\nCrew training on the car deck"
        + " happens every " + (i % 7 + 1) + " weeks; fuel per crossing is " + (300 + i) + " litres.\n";
    check(client.post("/v1/documents").bearerTokenAuthentication(key).sendJsonObject(new JsonObject()
        .put("uri", "notes-" + i + ".md").put("content_type", "text/markdown").put("content", content)).await(), 201);
  }

  private String tenantId(String name) {
    HttpResponse<Buffer> r = client.post("/v1/admin/tenants").bearerTokenAuthentication(ADMIN_TOKEN)
        .sendJsonObject(new JsonObject().put("name", name)).await();
    return check(r, 201).bodyAsJsonObject().getString("id");
  }

  private String key(String tenantId) {
    HttpResponse<Buffer> r = client.post("/v1/admin/tenants/" + tenantId + "/keys").bearerTokenAuthentication(ADMIN_TOKEN)
        .sendJsonObject(new JsonObject().put("name", "bench")).await();
    return check(r, 201).bodyAsJsonObject().getString("api_key");
  }

  private static HttpResponse<Buffer> check(HttpResponse<Buffer> r, int status) {
    if (r.statusCode() != status) {
      throw new IllegalStateException("expected " + status + ", got " + r.statusCode() + ": " + r.bodyAsString());
    }
    return r;
  }
}
