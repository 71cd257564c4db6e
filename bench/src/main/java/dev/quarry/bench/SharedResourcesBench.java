package dev.quarry.bench;

import dev.quarry.config.Config;
import dev.quarry.gateway.Gateway;
import dev.quarry.gateway.OpsSettings;
import dev.quarry.sandbox.MountPrivacy;
import dev.quarry.sandbox.SandboxSettings;
import dev.quarry.telemetry.QuarryMetrics;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The shared resources of issue 33, classes 3 to 5: a quiet tenant beside a noisy one that (a) keeps
 * 8 sandboxes spinning on the CPU (real runner), (b) has 8 executions each sending 1000 searches at
 * once (the tests' hostile runner, as escaped code could), (c) opens 8 scoped sandboxes of a large
 * document (real runner). The quiet tenant's CPU-bound cell, search and scoped execution are measured
 * alone and beside each, in alternating rounds. The data and run directories are tmpfs mounts of
 * their own, as in production (mount privacy); the run directory's is
 * {@code bench.shared.run.mib} MiB. Runs as root (it mounts them). Standalone:
 * {@code java -cp <bench classpath> dev.quarry.bench.SharedResourcesBench}.
 */
public final class SharedResourcesBench {
  private static final String ADMIN_TOKEN = "bench-admin-token-0123456789";
  private static final int NOISY = 8;
  private static final int CELLS = Integer.getInteger("bench.shared.cells", 5);
  private static final int SEARCHES = Integer.getInteger("bench.shared.searches", 40);
  private static final int RUN_TMPFS_MIB = Integer.getInteger("bench.shared.run.mib", 2);
  /** A cell of about a third of a second of CPU alone, in the runner's language. */
  private static final String CPU_CELL = "n = 0\nfor i in range(1500000):\n    n = n + i * i % 7\nprint(n)";
  private static final String BUSY = "print('busy')\nwhile True:\n    pass";

  private final Vertx vertx = Vertx.vertx();
  private WebClient client;
  private int port;
  private final AtomicInteger quietFailures = new AtomicInteger();
  /** Why noisy executions did not start, by phase: the status and the first refusal's body. */
  private final List<String> refusals = new ArrayList<>();
  /** How the flooding executions ended: status and the kinds of outcome they printed. */
  private final java.util.Map<String, Integer> floodOutcomes = new java.util.concurrent.ConcurrentSkipListMap<>();

  public static void main(String[] args) throws Exception {
    System.out.println(new SharedResourcesBench().run());
    System.exit(0);
  }

  private static final int ROUNDS = Integer.getInteger("bench.shared.rounds", 4);

  String run() throws Exception {
    Path base = Files.createTempDirectory("quarry-bench-shared");
    Path dataDir = Files.createDirectories(base.resolve("data"));
    Path runDir = Files.createDirectories(base.resolve("run"));
    sh("mount", "-t", "tmpfs", "-o", "size=512m,mode=755", "tmpfs", dataDir.toString());
    sh("mount", "-t", "tmpfs", "-o", "size=" + RUN_TMPFS_MIB + "m,mode=755", "tmpfs", runDir.toString());
    try (BenchDatabase db = BenchDatabase.fresh("shared", true)) {
      Config c = db.config().withHttpPort(0).withDataDir(dataDir);
      Config config = c.withTenancy(c.tenancy().withAdminToken(ADMIN_TOKEN)
          .withDefault(dev.quarry.config.Quota.REQUESTS_PER_MINUTE, 1_000_000));
      SandboxSettings env = SandboxSettings.fromEnv(System.getenv());
      StringBuilder md = new StringBuilder();
      try {
        // The real runner: the CPU and the scoped sandboxes.
        QuarryMetrics metrics = new QuarryMetrics();
        Gateway gateway = new Gateway(config, OpsSettings.DEFAULTS, metrics, new Gateway.AgentWiring(null,
            settings(env, env.image(), runDir)));
        String deployment = vertx.deployVerticle(gateway).await();
        port = gateway.port();
        client = WebClient.create(vertx, new WebClientOptions().setDefaultHost("127.0.0.1").setDefaultPort(port));
        String quiet = key(tenantId("quiet"));
        String noisy = key(tenantId("noisy"));
        for (int i = 0; i < 12; i++) {
          ingest(quiet, "notes-" + i + ".md", notes(i));
          ingest(noisy, "notes-" + i + ".md", notes(i));
        }
        String quietDoc = ingest(quiet, "quiet-scoped.md", notes(99));
        String bigDoc = ingest(noisy, "large.md", large());
        cells(quiet, new ArrayList<>(), new ArrayList<>()); // warm-up

        // (a) CPU: the noisy tenant's sandboxes spinning; alone and beside in alternating rounds.
        List<Double> aloneCell = new ArrayList<>();
        List<Double> aloneCellWall = new ArrayList<>();
        List<Double> busyCell = new ArrayList<>();
        List<Double> busyCellWall = new ArrayList<>();
        int busy = 0;
        for (int round = 0; round < ROUNDS; round++) {
          cells(quiet, aloneCell, aloneCellWall);
          HttpClient http = noisyHttp();
          List<HttpClientRequest> held = new ArrayList<>();
          busy = hold(http, noisy, BUSY, null, held);
          cells(quiet, busyCell, busyCellWall);
          stop(http, held, gateway);
        }

        // (c) disk: scoped sandboxes of the large document.
        FileStore runStore = Files.getFileStore(runDir);
        long runUsedBefore = runStore.getTotalSpace() - runStore.getUnallocatedSpace();
        HttpClient http = noisyHttp();
        List<HttpClientRequest> held = new ArrayList<>();
        int scoped = hold(http, noisy, BUSY, bigDoc, held);
        long runUsed = runStore.getTotalSpace() - runStore.getUnallocatedSpace() - runUsedBefore;
        int quietScopedOk = 0;
        String quietScopedError = "";
        for (int i = 0; i < 3; i++) {
          HttpResponse<Buffer> r = client.post("/v1/executions").bearerTokenAuthentication(quiet)
              .sendJsonObject(new JsonObject().put("code", "from pathlib import Path\nprint(len(list(Path('/documents').iterdir())))")
                  .put("document_ids", new JsonArray().add(quietDoc))).await();
          if (r.statusCode() == 200 && r.bodyAsJsonObject().getBoolean("success", false)) {
            quietScopedOk++;
          } else {
            quietFailures.incrementAndGet();
            quietScopedError = r.statusCode() + " " + r.bodyAsString();
          }
        }
        stop(http, held, gateway);
        vertx.undeploy(deployment).await();

        // (b) callbacks, with the runner of escaped code: each noisy execution sends 1000 searches at once.
        QuarryMetrics floodMetrics = new QuarryMetrics();
        Gateway flooded = new Gateway(config, OpsSettings.DEFAULTS, floodMetrics, new Gateway.AgentWiring(null,
            settings(env, hostileImage(env.image()), runDir)));
        deployment = vertx.deployVerticle(flooded).await();
        port = flooded.port();
        client = WebClient.create(vertx, new WebClientOptions().setDefaultHost("127.0.0.1").setDefaultPort(port));
        searches(quiet); // warm-up
        List<Double> aloneSearch = new ArrayList<>();
        List<Double> floodSearch = new ArrayList<>();
        double floodSeconds = 0;
        double served = 0;
        for (int round = 0; round < ROUNDS; round++) {
          aloneSearch.addAll(searches(quiet));
          HttpClient floodHttp = noisyHttp();
          AtomicBoolean on = new AtomicBoolean(true);
          for (int i = 0; i < NOISY; i++) {
            flood(floodHttp, noisy, on);
          }
          // Until the floods' sandboxes have started and their calls come in (at most a minute).
          double before = served(floodMetrics);
          long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
          while (served(floodMetrics) - before < 50 && System.nanoTime() < deadline) {
            Thread.sleep(50);
          }
          long start = System.nanoTime();
          double servedAtStart = served(floodMetrics);
          floodSearch.addAll(searches(quiet));
          floodSeconds += (System.nanoTime() - start) / 1e9;
          served += served(floodMetrics) - servedAtStart;
          on.set(false);
          floodHttp.close().await();
          awaitIdle(flooded);
        }
        double floodRate = served / floodSeconds;
        vertx.undeploy(deployment).await();

        md.append(String.format(Locale.ROOT, "%n### Shared CPU, callbacks and disk (issue 33, classes 3-5)%n%n"
            + "The quiet tenant alone, then beside the noisy tenant's sandboxes (%d asked for each time, no warm pool),"
            + " %d alternating rounds: (a) real runner, `while True: pass`; (b) the tests' hostile runner, each"
            + " execution sending `search(limit=100)` 1000 times at once, re-sent as it ends; (c) real runner, scoped"
            + " to one %.0f KB document, spinning. Data and run directories are tmpfs mounts, the run directory's"
            + " %d MiB. Sandbox CPU %d milli-CPUs, %d CPUs.%n%n",
            NOISY, ROUNDS, large().length() / 1000.0, RUN_TMPFS_MIB, env.limits().nanoCpus() / 1_000_000,
            Runtime.getRuntime().availableProcessors()));
        md.append("| quiet tenant | alone p50 ms | beside p50 ms | ratio | alone p95 ms | beside p95 ms | ratio |\n"
            + "|---|---:|---:|---:|---:|---:|---:|\n");
        row(md, "CPU cell (its duration_ms), " + busy + " busy sandboxes", aloneCell, busyCell);
        row(md, "CPU cell (request), " + busy + " busy sandboxes", aloneCellWall, busyCellWall);
        row(md, "search, " + NOISY + " flooding executions", aloneSearch, floodSearch);
        md.append(String.format(Locale.ROOT, "%n- noisy sandboxes running: (a) %d, (c) %d of %d asked%n",
            busy, scoped, NOISY));
        md.append(String.format(Locale.ROOT, "- (b) searches served to the noisy tenant's sandboxes: %.0f a second;"
            + " flooding executions ended: %s%n", floodRate, floodOutcomes));
        md.append(String.format(Locale.ROOT, "- (c) run directory used by %d scoped sandboxes: %d KiB of %d MiB;"
            + " the quiet tenant's scoped executions: %d of 3 succeeded%s%n", scoped, runUsed / 1024, RUN_TMPFS_MIB,
            quietScopedOk, quietScopedError.isEmpty() ? "" : " (" + clip(quietScopedError) + ")"));
        md.append(String.format(Locale.ROOT, "- quiet requests that failed: %d%n", quietFailures.get()));
        if (!refusals.isEmpty()) {
          md.append("- noisy executions that did not start: ").append(String.join("; ", refusals)).append("\n");
        }
        md.append("- load average (1, 5, 15 min) at the end: " + loadAverage() + "\n");
      } finally {
        vertx.close().await();
      }
      return md.toString();
    } finally {
      sh("umount", "-l", dataDir.toString());
      sh("umount", "-l", runDir.toString());
    }
  }

  private static SandboxSettings settings(SandboxSettings env, String image, Path runDir) {
    return new SandboxSettings(env.dockerHost(), image, List.of(), env.user(),
        "bench-shared-" + java.util.UUID.randomUUID().toString().substring(0, 8), runDir, env.limits(),
        env.maxLimits(), 0, env.reapInterval(), false, env.maxActive(), env.maxWait(), env.fairness(),
        MountPrivacy.Policy.REQUIRE);
  }

  /** Closes the noisy tenant's streams (so its sandboxes go now) and waits until they are gone. */
  private void stop(HttpClient http, List<HttpClientRequest> held, Gateway gateway) throws Exception {
    for (HttpClientRequest r : held) {
      try {
        r.connection().close().await();
      } catch (RuntimeException e) {
        // refused or ended already
      }
    }
    http.close().await();
    awaitIdle(gateway);
  }

  /** One flooding execution of the hostile runner, sent again when it ends while the phase lasts. */
  private void flood(HttpClient http, String key, AtomicBoolean on) {
    if (!on.get()) {
      return;
    }
    http.request(new RequestOptions().setMethod(HttpMethod.POST).setHost("127.0.0.1").setPort(port)
            .setURI("/v1/executions").putHeader("Content-Type", "application/json")
            .putHeader("Authorization", "Bearer " + key))
        .compose(req -> req.send(new JsonObject().put("code", "#flood 1000 search 100")
            .put("limits", new JsonObject().put("callbacks", 1000).put("wall_time_ms", 60_000)).encode()))
        .compose(resp -> resp.body().map(body -> resp.statusCode() + (resp.statusCode() == 200
            ? " " + new JsonObject(body).getString("stdout", "").strip() : "")))
        .onComplete(ar -> {
          String outcome = ar.succeeded() ? ar.result().replaceAll("=\\d+", "") : ar.cause().getClass().getSimpleName();
          floodOutcomes.merge(outcome, 1, Integer::sum);
          // A refused one (the tenant at its share of the sandboxes) is asked again a second later, not at once.
          if (ar.succeeded() && ar.result().startsWith("200")) {
            flood(http, key, on);
          } else {
            vertx.setTimer(1000, t -> flood(http, key, on));
          }
        });
  }

  /** The hostile runner of the tests on {@code runner}, tagged with "-hostile". */
  private static String hostileImage(String runner) throws Exception {
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

  private static String clip(String s) {
    return s.length() > 160 ? s.substring(0, 160) + "…" : s;
  }

  private static void row(StringBuilder md, String what, List<Double> alone, List<Double> beside) {
    if (alone.isEmpty() || beside.isEmpty()) {
      md.append("| ").append(what).append(" | no samples |\n");
      return;
    }
    Percentiles a = Percentiles.of(alone.stream().mapToDouble(Double::doubleValue).toArray());
    Percentiles b = Percentiles.of(beside.stream().mapToDouble(Double::doubleValue).toArray());
    md.append(String.format(Locale.ROOT, "| %s | %.0f | %.0f | x%.2f | %.0f | %.0f | x%.2f |%n", what, a.p50(), b.p50(),
        b.p50() / a.p50(), a.p95(), b.p95(), b.p95() / a.p95()));
  }

  /** The quiet tenant's CPU-bound cells, one after the other: the cell's own time and the request's. */
  private void cells(String key, List<Double> cell, List<Double> request) {
    for (int i = 0; i < CELLS; i++) {
      long start = System.nanoTime();
      HttpResponse<Buffer> r = client.post("/v1/executions").bearerTokenAuthentication(key)
          .sendJsonObject(new JsonObject().put("code", CPU_CELL)).await();
      double ms = (System.nanoTime() - start) / 1e6;
      if (r.statusCode() != 200 || !r.bodyAsJsonObject().getBoolean("success", false)) {
        quietFailures.incrementAndGet();
        System.err.println("quiet cell failed: " + r.statusCode() + " " + clip(r.bodyAsString()));
        continue;
      }
      cell.add(r.bodyAsJsonObject().getLong("duration_ms").doubleValue());
      request.add(ms);
    }
  }

  private List<Double> searches(String key) {
    List<Double> out = new ArrayList<>();
    for (int i = 0; i < SEARCHES; i++) {
      long start = System.nanoTime();
      HttpResponse<Buffer> r = client.post("/v1/search").bearerTokenAuthentication(key)
          .sendJsonObject(new JsonObject().put("query", "first ferry timetable").put("limit", 10)).await();
      if (r.statusCode() != 200) {
        quietFailures.incrementAndGet();
        continue;
      }
      out.add((System.nanoTime() - start) / 1e6);
    }
    return out;
  }

  private HttpClient noisyHttp() {
    return vertx.createHttpClient(new io.vertx.core.http.PoolOptions().setHttp1MaxSize(2 * NOISY));
  }

  /**
   * Asks for {@link #NOISY} streamed executions of {@code code} (scoped to {@code document} when
   * given) and waits until each has printed "busy" or been refused; returns how many run.
   */
  private int hold(HttpClient http, String key, String code, String document) throws Exception {
    return hold(http, key, code, document, new ArrayList<>());
  }

  private int hold(HttpClient http, String key, String code, String document, List<HttpClientRequest> held)
      throws Exception {
    List<CompletableFuture<Boolean>> started = new ArrayList<>();
    for (int i = 0; i < NOISY; i++) {
      CompletableFuture<Boolean> running = new CompletableFuture<>();
      started.add(running);
      JsonObject body = new JsonObject().put("code", code)
          .put("limits", new JsonObject().put("wall_time_ms", 110_000).put("callbacks", 2000));
      if (document != null) {
        body.put("document_ids", new JsonArray().add(document));
      }
      HttpClientRequest request = http.request(new RequestOptions().setMethod(HttpMethod.POST).setHost("127.0.0.1")
          .setPort(port).setURI("/v1/executions").putHeader("Accept", "text/event-stream")
          .putHeader("Content-Type", "application/json").putHeader("Authorization", "Bearer " + key)).await();
      held.add(request);
      AtomicBoolean seen = new AtomicBoolean();
      request.response().onSuccess(response -> {
        if (response.statusCode() != 200) {
          response.body().onComplete(b -> {
            synchronized (refusals) {
              refusals.add(response.statusCode() + " " + (b.succeeded() ? clip(b.result().toString()) : ""));
            }
            running.complete(false);
          });
          return;
        }
        response.handler(chunk -> {
          if (!seen.get() && chunk.toString().contains("busy")) {
            seen.set(true);
            running.complete(true);
          } else if (!running.isDone() && chunk.toString().contains("event: result")) {
            synchronized (refusals) {
              refusals.add("ended: " + clip(chunk.toString()));
            }
            running.complete(false); // ended before it was busy (it failed to start)
          }
        });
      }).onFailure(running::completeExceptionally);
      request.send(body.encode());
    }
    int n = 0;
    for (CompletableFuture<Boolean> f : started) {
      try {
        n += f.get(120, TimeUnit.SECONDS) ? 1 : 0;
      } catch (Exception e) {
        System.err.println("a noisy execution did not start: " + e);
      }
    }
    return n;
  }

  /** Searches the gateway served to sandboxes so far (every tenant's). */
  private static double served(QuarryMetrics metrics) {
    var timer = metrics.registry().find("quarry_callback_duration").tag("kind", "search").tag("outcome", "ok").timer();
    return timer == null ? 0 : timer.count();
  }

  private static void awaitIdle(Gateway gateway) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (gateway.sandboxes().capacity().used() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
  }

  private static String notes(int i) {
    return "# Ferry notes " + i + "\n\n## Timetable\n\nThe first ferry leaves at 06:" + (10 + i)
        + ". Harbour dues for cargo vessels are " + (100 + i) + " crowns.\n\n## Crew\n\nCrew training on the car deck"
        + " happens every " + (i % 7 + 1) + " weeks; fuel per crossing is " + (300 + i) + " litres.\n";
  }

  /** About 400 KB of sections of prose. */
  private static String large() {
    StringBuilder sb = new StringBuilder("# The large report\n\n");
    for (int s = 0; sb.length() < 400_000; s++) {
      sb.append("## Section ").append(s).append("\n\n");
      for (int p = 0; p < 4; p++) {
        sb.append("Paragraph ").append(p).append(" of section ").append(s).append(" records the crossings, the")
            .append(" cargo, the harbour dues and the weather of week ").append(s % 52).append(", with the crew's")
            .append(" notes on fuel, ramps and timetables, so that the year can be compared with the last one.\n\n");
      }
    }
    return sb.toString();
  }

  private static void sh(String... command) throws Exception {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IllegalStateException(String.join(" ", command) + " failed (root is needed): " + out);
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

  private String ingest(String key, String name, String content) {
    HttpResponse<Buffer> r = client.post("/v1/documents").bearerTokenAuthentication(key).sendJsonObject(new JsonObject()
        .put("uri", name).put("content_type", "text/markdown").put("content", content)).await();
    return check(r, 201).bodyAsJsonObject().getString("id");
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
