package dev.quarry.bench;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.exception.ConflictException;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.Container;
import dev.quarry.sandbox.ContainerLauncher;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * Soak under faults: a steady load of concurrent analyses (scripted model; each a few cells, one of
 * them calling {@code search}) against the gateway as a separate process, for a bounded time, while
 * in turn its PostgreSQL is restarted, one of its sandbox containers is killed on the engine, the
 * model endpoint answers 503 for a while, and the gateway gets SIGTERM, drains, exits and is started
 * again. Then the gateway is stopped for good and the run is checked: every analysis the client
 * started ended with a success or a typed failure recorded in the database, nothing is left on the
 * engine or in the sandbox directories, no request outlived its bound, memory stayed flat.
 *
 * <p>The database is a cluster of the soak's own (see {@link SoakCluster}); only containers carrying
 * the soak gateway's label are ever touched.
 */
final class SoakBench {
  private static final String ADMIN_TOKEN = "soak-admin-token-0123456789";
  private static final List<String> CELLS = List.of(
      "hits = await search('how are sandboxes restarted after a fault', limit=3)\nprint(len(hits))",
      "x = sum(range(1000))\nprint(x)",
      "print('done', x, len(hits))");
  private static final List<String> TERMINAL = List.of("succeeded", "failed", "cancelled", "budget_exhausted");

  /** The whole run, faults included (default 330 s: five and a half minutes). */
  private static final int SECONDS = setting("bench.soak.seconds", "QUARRY_SOAK_SECONDS", 330);
  private static final int CONCURRENCY = setting("bench.soak.concurrency", "QUARRY_SOAK_CONCURRENCY", 6);
  private static final int PG_DOWN_SECONDS = setting("bench.soak.pgDownSeconds", "QUARRY_SOAK_PG_DOWN_SECONDS", 10);
  private static final int MODEL_DOWN_SECONDS = setting("bench.soak.modelDownSeconds", "QUARRY_SOAK_MODEL_DOWN_SECONDS", 20);
  private static final int DRAIN_GRACE_SECONDS = setting("bench.soak.drainGrace", "QUARRY_SOAK_DRAIN_GRACE_SECONDS", 5);
  private static final int PG_PORT = setting("bench.soak.pgPort", "QUARRY_SOAK_PG_PORT", 5439);
  /** No client request may take longer than this (an analysis' own wall-time budget is 120 s). */
  private static final Duration REQUEST_BOUND = Duration.ofSeconds(180);

  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(2)).build();
  private final List<Attempt> attempts = new CopyOnWriteArrayList<>();
  private final List<Fault> faults = new ArrayList<>();
  private final List<Sample> memory = new CopyOnWriteArrayList<>();
  private final AtomicInteger asked = new AtomicInteger();
  private final AtomicBoolean loadRunning = new AtomicBoolean(true);
  private long t0;
  private SoakGateway gateway;
  private String key;

  /** One request of the load, as the client saw it. */
  record Attempt(String analysisId, long startNanos, long endNanos, String outcome, String errorType) {
    double ms() {
      return (endNanos - startNanos) / 1e6;
    }

    boolean started() {
      return analysisId != null;
    }
  }

  /** A fault and its window on the run's clock (an instantaneous one ends where it starts). */
  record Fault(String name, long startNanos, long endNanos, List<String> notes) {}

  /** Memory of the gateway process, with the process' start count (1 before the restart). */
  record Sample(long atNanos, int process, long heapBytes, long rssBytes) {}

  String run() throws Exception {
    String gatewayId = "soak-" + UUID.randomUUID().toString().substring(0, 8);
    SoakCluster cluster = new SoakCluster(PG_PORT);
    cluster.prepare();
    Path work = Files.createTempDirectory("quarry-soak");
    Path runDir = Files.createDirectories(work.resolve("run"));
    Vertx vertx = Vertx.vertx();
    BenchModelServer model = new BenchModelServer(vertx, CELLS);
    String dockerHost = System.getenv().getOrDefault("DOCKER_HOST", "unix:///var/run/docker.sock");
    Map<String, String> env = new HashMap<>();
    env.put("QUARRY_PG_PORT", Integer.toString(PG_PORT));
    env.put("QUARRY_PG_DATABASE", SoakCluster.DATABASE);
    env.put("QUARRY_ADMIN_TOKEN", ADMIN_TOKEN);
    env.put("QUARRY_GATEWAY_ID", gatewayId);
    env.put("QUARRY_DATA_DIR", work.resolve("data").toString());
    env.put("QUARRY_SANDBOX_RUN_DIR", runDir.toString());
    env.put("QUARRY_SANDBOX_IMAGE", System.getenv().getOrDefault("QUARRY_SANDBOX_IMAGE", "quarry-sandbox:latest"));
    env.put("QUARRY_MODEL_BASE_URL", model.baseUrl());
    env.put("QUARRY_MODEL_API_KEY", "soak-key");
    env.put("QUARRY_MODEL", "bench-scripted");
    env.put("QUARRY_QUOTA_CONCURRENT_ANALYSES", "64");
    env.put("QUARRY_QUOTA_REQUESTS_PER_MINUTE", "100000");
    env.put("QUARRY_DRAIN_GRACE_SECONDS", Integer.toString(DRAIN_GRACE_SECONDS));
    env.put("QUARRY_LOG_FORMAT", "json");
    env.put("DOCKER_HOST", dockerHost);
    Path log = work.resolve("gateway.log");
    gateway = new SoakGateway(env, freePort(), freePort(), log);
    StringBuilder md = new StringBuilder();
    try {
      Duration firstStart = gateway.start(Duration.ofSeconds(180));
      System.out.printf(Locale.ROOT, "  gateway %s up in %.1f s (pid %d, log %s)%n", gatewayId,
          firstStart.toMillis() / 1e3, gateway.pid(), log);
      String tenant = admin("/v1/admin/tenants", new JsonObject().put("name", "soak")).getString("id");
      key = admin("/v1/admin/tenants/" + tenant + "/keys", new JsonObject().put("name", "soak")).getString("api_key");
      ingest();

      t0 = System.nanoTime();
      List<Thread> workers = new ArrayList<>();
      for (int i = 0; i < CONCURRENCY; i++) {
        workers.add(Thread.ofVirtual().name("soak-client-" + i).start(this::load));
      }
      Thread sampler = Thread.ofVirtual().name("soak-memory").start(this::sampleMemory);

      awaitRunClock(0.18);
      restartDatabase(cluster);
      awaitRunClock(0.38);
      killSandbox(dockerHost, gatewayId);
      awaitRunClock(0.52);
      modelOutage(model);
      awaitRunClock(0.72);
      restartGateway();
      awaitRunClock(1.0);

      loadRunning.set(false);
      for (Thread w : workers) {
        w.join(REQUEST_BOUND.toMillis() + 10_000);
      }
      sampler.interrupt();
      sampler.join();
      double loadSeconds = (System.nanoTime() - t0) / 1e9;
      SoakGateway.Exit finalExit = gateway.terminate(Duration.ofSeconds(DRAIN_GRACE_SECONDS + 90), Duration.ofSeconds(DRAIN_GRACE_SECONDS + 12));
      int leftContainers = containers(dockerHost, gatewayId).size();
      // Sandboxes' socket directories are run/<gateway id>/<sandbox id>: the gateway's own may stay.
      List<String> leftDirs;
      try (var entries = Files.walk(runDir, 2)) {
        leftDirs = entries.filter(p -> runDir.relativize(p).getNameCount() == 2).map(p -> runDir.relativize(p).toString())
            .toList();
      }
      Map<String, String[]> recorded = recorded(cluster);
      md.append(report(gatewayId, loadSeconds, finalExit, leftContainers, leftDirs, recorded, model));
    } finally {
      loadRunning.set(false);
      if (gateway.alive()) {
        gateway.terminate(Duration.ofSeconds(DRAIN_GRACE_SECONDS + 90), Duration.ofSeconds(DRAIN_GRACE_SECONDS + 12));
      }
      model.close();
      vertx.close().await();
      if (!Boolean.getBoolean("bench.soak.keepCluster")) {
        cluster.drop();
      }
    }
    return md.toString();
  }

  // ---------------------------------------------------------------- the load

  private void load() {
    while (loadRunning.get()) {
      Attempt a = analyse();
      attempts.add(a);
      if (!a.started()) {
        // The gateway is down, draining or not ready: try again shortly, as a client would.
        try {
          Thread.sleep(250);
        } catch (InterruptedException e) {
          return;
        }
      }
    }
  }

  /** One analysis, streamed to its end (bounded): its id, final status and error type as the client saw them. */
  private Attempt analyse() {
    String question = "soak analysis " + asked.incrementAndGet() + ": what do the cells print?";
    JsonObject body = new JsonObject().put("question", question).put("stream", true)
        .put("budgets", new JsonObject().put("wall_time_ms", 120_000));
    HttpRequest request = HttpRequest.newBuilder(uri("/v1/analyses")).header("Authorization", "Bearer " + key)
        .header("Content-Type", "application/json").header("Accept", "text/event-stream")
        .POST(HttpRequest.BodyPublishers.ofString(body.encode())).build();
    long start = System.nanoTime();
    var pending = http.sendAsync(request, HttpResponse.BodyHandlers.ofString());
    try {
      HttpResponse<String> r = pending.get(REQUEST_BOUND.toMillis(), TimeUnit.MILLISECONDS);
      long end = System.nanoTime();
      String id = r.headers().firstValue("X-Analysis-Id").orElse(null);
      if (r.statusCode() != 200) {
        String code = "";
        try {
          code = new JsonObject(r.body()).getJsonObject("error").getString("code");
        } catch (RuntimeException e) {
          code = "?";
        }
        return new Attempt(id, start, end, "refused " + r.statusCode() + " " + code, null);
      }
      JsonObject terminal = null;
      for (String line : r.body().split("\n")) {
        if (line.startsWith("data: ")) {
          JsonObject event = new JsonObject(line.substring(6));
          if ("answer".equals(event.getString("type")) || "failed".equals(event.getString("type"))) {
            terminal = event;
          }
        }
      }
      if (terminal == null) {
        return new Attempt(id, start, end, "stream ended without a terminal event", null);
      }
      JsonObject error = terminal.getJsonObject("error");
      return new Attempt(id, start, end, terminal.getString("status"), error == null ? null : error.getString("type"));
    } catch (TimeoutException e) {
      pending.cancel(true);
      return new Attempt(null, start, System.nanoTime(), "stuck", null);
    } catch (ExecutionException e) {
      // A POST on a kept-alive connection the stopping gateway closed gets no response at all; it
      // never reached the gateway, so the client retries it like a refused one. Any analysis it
      // might have started is in the database all the same, and checked there.
      String why = e.getCause() instanceof java.net.ConnectException ? "refused: no gateway listening"
          : String.valueOf(e.getCause()).contains("header parser received no bytes")
              ? "refused: connection closed before a response"
              : "broken: " + e.getCause();
      return new Attempt(null, start, System.nanoTime(), why, null);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Attempt(null, start, System.nanoTime(), "interrupted", null);
    }
  }

  // ---------------------------------------------------------------- the faults

  private void restartDatabase(SoakCluster cluster) throws Exception {
    List<String> notes = new ArrayList<>();
    long start = System.nanoTime();
    cluster.stop();
    notes.add(String.format(Locale.ROOT, "stopped (fast) at %.0f s, held down %d s", seconds(start), PG_DOWN_SECONDS));
    Thread.sleep(PG_DOWN_SECONDS * 1000L / 2);
    SoakGateway.Response during = gateway.get("/readyz");
    notes.add("/readyz during the outage: " + during.statusCode() + " " + checkOf(during.body(), "database"));
    Thread.sleep(PG_DOWN_SECONDS * 1000L - PG_DOWN_SECONDS * 1000L / 2);
    cluster.start();
    long up = System.nanoTime();
    notes.add(String.format(Locale.ROOT, "started again at %.0f s", seconds(up)));
    long deadline = up + TimeUnit.SECONDS.toNanos(60);
    SoakGateway.Response after = gateway.get("/readyz");
    while (after.statusCode() != 200 && System.nanoTime() < deadline) {
      Thread.sleep(100);
      after = gateway.get("/readyz");
    }
    notes.add(after.statusCode() == 200
        ? String.format(Locale.ROOT, "ready again %.1f s after the database came back", (System.nanoTime() - up) / 1e9)
        : "NOT ready 60 s after the database came back: " + after.body());
    faults.add(new Fault("PostgreSQL restarted", start, up, notes));
    System.out.println("  fault: " + String.join("; ", notes));
  }

  /**
   * Kills two of the gateway's running sandboxes on the engine: the oldest, most likely running an
   * analysis' cells (the warm pool's are the newest, each one taken being replaced at once), and the
   * newest, most likely waiting in the warm pool. Under this load a sandbox lives a second or two,
   * so one may be removed between the listing and the kill (its analysis ended): then the next one,
   * listing again when all of them went, for up to 30 s.
   */
  private void killSandbox(String dockerHost, String gatewayId) throws IOException {
    List<String> notes = new ArrayList<>();
    long start = System.nanoTime();
    try (DockerClient docker = ContainerLauncher.connect(dockerHost)) {
      for (boolean oldest : new boolean[] {true, false}) {
        String killed = killOne(docker, gatewayId, oldest, start + TimeUnit.SECONDS.toNanos(30));
        notes.add(killed == null ? "no " + (oldest ? "oldest" : "newest") + " sandbox stayed long enough to be killed"
            : String.format(Locale.ROOT, "killed the %s running sandbox, %s, at %.0f s", oldest ? "oldest" : "newest",
                killed, seconds(System.nanoTime())));
      }
    }
    faults.add(new Fault("sandbox containers killed (docker kill)", start, System.nanoTime(), notes));
    System.out.println("  fault: " + String.join("; ", notes));
  }

  private static String killOne(DockerClient docker, String gatewayId, boolean oldest, long deadline) {
    while (System.nanoTime() < deadline) {
      Comparator<Container> byAge = Comparator.comparingLong(Container::getCreated);
      List<Container> running = docker.listContainersCmd().withStatusFilter(List.of("running"))
          .withLabelFilter(Map.of(ContainerLauncher.LABEL_GATEWAY, gatewayId)).exec().stream()
          .sorted(oldest ? byAge : byAge.reversed()).toList();
      for (Container victim : running) {
        try {
          docker.killContainerCmd(victim.getId()).exec();
          return victim.getLabels().get(ContainerLauncher.LABEL_SANDBOX_ID);
        } catch (NotFoundException | ConflictException gone) {
          // Removed since the listing: the next one.
        }
      }
    }
    return null;
  }

  private void modelOutage(BenchModelServer model) throws InterruptedException {
    long start = System.nanoTime();
    int before = model.refused();
    model.failing(true);
    Thread.sleep(MODEL_DOWN_SECONDS * 1000L);
    model.failing(false);
    long end = System.nanoTime();
    List<String> notes = List.of(String.format(Locale.ROOT, "503 on every request from %.0f s for %d s: %d requests refused",
        seconds(start), MODEL_DOWN_SECONDS, model.refused() - before));
    faults.add(new Fault("model endpoint 503 for " + MODEL_DOWN_SECONDS + " s", start, end, notes));
    System.out.println("  fault: " + String.join("; ", notes));
  }

  private void restartGateway() throws Exception {
    List<String> notes = new ArrayList<>();
    long start = System.nanoTime();
    SoakGateway.Exit exit = gateway.terminate(Duration.ofSeconds(DRAIN_GRACE_SECONDS + 90), Duration.ofSeconds(DRAIN_GRACE_SECONDS + 12));
    notes.add(String.format(Locale.ROOT, "SIGTERM at %.0f s: exit status %d after %.1f s (drain grace %d s)",
        seconds(start), exit.status(), exit.took().toMillis() / 1e3, DRAIN_GRACE_SECONDS));
    long down = System.nanoTime();
    Duration up = gateway.start(Duration.ofSeconds(180));
    notes.add(String.format(Locale.ROOT, "started again, ready %.1f s later", up.toMillis() / 1e3));
    faults.add(new Fault("gateway SIGTERM and restart", start, down, notes));
    System.out.println("  fault: " + String.join("; ", notes));
  }

  // ---------------------------------------------------------------- the checks

  private void sampleMemory() {
    while (!Thread.currentThread().isInterrupted()) {
      try {
        if (gateway.alive()) {
          SoakGateway.Memory m = gateway.memory();
          if (m.heapBytes() > 0) {
            memory.add(new Sample(System.nanoTime(), gateway.starts(), m.heapBytes(), m.rssBytes()));
          }
        }
        Thread.sleep(10_000);
      } catch (InterruptedException e) {
        return;
      } catch (IOException | RuntimeException e) {
        // The process went away between the check and the sample (the restart): the next one counts.
      }
    }
  }

  /** Every analysis row of the soak database: id → {status, error_type}. */
  private static Map<String, String[]> recorded(SoakCluster cluster) throws IOException, InterruptedException {
    Map<String, String[]> out = new HashMap<>();
    for (String row : cluster.query("SELECT id, status, coalesce(error_type, '') FROM analyses")) {
      String[] f = row.split("\\|", -1);
      out.put(f[0], new String[] {f[1], f[2]});
    }
    return out;
  }

  private String report(String gatewayId, double loadSeconds, SoakGateway.Exit finalExit, int leftContainers,
      List<String> leftDirs, Map<String, String[]> recorded, BenchModelServer model) {
    List<Attempt> started = attempts.stream().filter(Attempt::started).toList();
    Map<String, Long> clientOutcomes = attempts.stream().collect(Collectors.groupingBy(a -> a.outcome()
        + (a.errorType() == null ? "" : " (" + a.errorType() + ")"), TreeMap::new, Collectors.counting()));
    Map<String, Long> dbOutcomes = recorded.values().stream().collect(Collectors.groupingBy(
        v -> v[0] + (v[1].isEmpty() ? "" : " (" + v[1] + ")"), TreeMap::new, Collectors.counting()));
    long notTerminal = recorded.values().stream().filter(v -> !TERMINAL.contains(v[0])).count();
    long untyped = recorded.values().stream().filter(v -> TERMINAL.contains(v[0]) && !v[0].equals("succeeded")
        && v[1].isEmpty()).count();
    long missing = started.stream().filter(a -> !recorded.containsKey(a.analysisId())).count();
    long stuck = attempts.stream().filter(a -> a.outcome().equals("stuck")).count();
    long broken = attempts.stream().filter(a -> a.outcome().startsWith("broken") || a.outcome().startsWith("stream ended")).count();
    long succeeded = started.stream().filter(a -> "succeeded".equals(a.outcome())).count();
    double maxMs = attempts.stream().mapToDouble(Attempt::ms).max().orElse(0);
    Percentiles ok = Percentiles.of(started.stream().filter(a -> "succeeded".equals(a.outcome()))
        .mapToDouble(Attempt::ms).toArray());
    Percentiles ended = Percentiles.of(started.stream().filter(a -> TERMINAL.contains(a.outcome()))
        .mapToDouble(Attempt::ms).toArray());

    StringBuilder faultRows = new StringBuilder();
    for (Fault f : faults) {
      List<Attempt> hit = started.stream().filter(a -> a.startNanos() <= f.endNanos() && a.endNanos() >= f.startNanos()).toList();
      Map<String, Long> byStatus = hit.stream().collect(Collectors.groupingBy(a -> {
        String[] db = recorded.get(a.analysisId());
        return db == null ? "not recorded" : db[0] + (db[1].isEmpty() ? "" : " (" + db[1] + ")");
      }, TreeMap::new, Collectors.counting()));
      faultRows.append(String.format(Locale.ROOT, "| %s | %s | %d | %s |%n", f.name(), String.join("; ", f.notes()),
          hit.size(), byStatus.entrySet().stream().map(e -> e.getValue() + " " + e.getKey()).collect(Collectors.joining(", "))));
    }

    String memoryRows = memoryRows();
    boolean memoryFlat = memoryFlat();
    boolean allRecorded = notTerminal == 0 && untyped == 0 && missing == 0;
    boolean clean = leftContainers == 0 && leftDirs.isEmpty() && finalExit.status() == 0;
    Fault restart = faults.stream().filter(f -> f.name().startsWith("gateway")).findFirst().orElse(null);
    boolean drained = restart != null && restart.notes().get(0).contains("exit status 0");

    System.out.printf(Locale.ROOT, "  %d requests, %d analyses started, %d succeeded; p50 %.0f ms p99 %.0f ms; stuck %d, not terminal %d%n",
        attempts.size(), started.size(), succeeded, ok.p50(), ok.p99(), stuck, notTerminal);

    return String.format(Locale.ROOT, """
        %d clients, each starting an analysis as soon as its last one ended (streamed, `POST /v1/analyses`
        with `stream: true`), for %.0f s against the gateway running as a process of its own (`dev.quarry.cli.Main
        serve`, configured by environment: its own PostgreSQL cluster on port %d, gateway id `%s`, drain grace
        %d s, otherwise the defaults: model retries 6 attempts from 500 ms, breaker after 8 failures). The model is
        the scripted OpenAI-compatible server of the analyses benchmark, in the bench's JVM; each analysis runs %d
        cells, the first calling `search` over two ingested documents, then answers. A refused request (gateway
        down or draining) is retried after 250 ms. In turn: PostgreSQL stopped (fast) and started %d s later,
        the oldest and the newest running sandbox containers of this gateway killed on the engine, the model endpoint answering
        503 for %d s, and the gateway sent SIGTERM, waited for, and started again.

        | measurement | value |
        |---|---|
        | requests sent / analyses started (an id came back) | %d / %d |
        | analyses succeeded | %d (%.2f per s over the run) |
        | duration of a succeeded analysis p50 / p95 / p99 | %.0f ms / %.0f ms / %.0f ms |
        | duration of any ended analysis p50 / p99 | %.0f ms / %.0f ms |
        | longest request (bound %d s) | %.1f s |
        | client outcomes | %s |
        | analyses in the database by status | %s |
        | model requests answered 503 | %d |

        What happened to the analyses in flight (started before the fault ended and ended after it began),
        by the status recorded in the database:

        | fault | what happened | analyses in flight | recorded status |
        |---|---|---:|---|
        %s

        Gateway memory (sampled every 10 s: heap in use right after a `jcmd GC.run`, and the resident set),
        per gateway process, first and last minute of each:

        | process | window | samples | heap after GC, mean MiB | RSS, mean MiB |
        |---|---|---:|---:|---:|
        %s

        Targets:
        - every analysis the client started ends with a success or a typed failure recorded in the database
          (%d not terminal, %d failed without a type, %d started but not recorded): %s
        - the SIGTERM drained and exited 0 (restart: %s; final stop: exit %d after %.1f s): %s
        - no orphans after the final shutdown (%d containers with the label `quarry.gateway=%s`, %d sandbox
          socket directories left): %s
        - no stuck requests (%d requests outlived %d s; %d streams broke off without a terminal event): %s
        - memory flat over the run (heap after GC of a process' last minute within 20%% + 16 MiB of its first): %s

        - load average of the machine (1, 5, 15 min) at the end: %s

        """,
        CONCURRENCY, loadSeconds, PG_PORT, gatewayId, DRAIN_GRACE_SECONDS, CELLS.size(), PG_DOWN_SECONDS, MODEL_DOWN_SECONDS,
        attempts.size(), started.size(), succeeded, succeeded / loadSeconds,
        ok.p50(), ok.p95(), ok.p99(), ended.p50(), ended.p99(),
        REQUEST_BOUND.toSeconds(), maxMs / 1e3,
        outcomes(clientOutcomes), outcomes(dbOutcomes), model.refused(),
        faultRows, memoryRows,
        notTerminal, untyped, missing, allRecorded ? "MET" : "NOT MET",
        restart == null ? "none" : restart.notes().get(0), finalExit.status(), finalExit.took().toMillis() / 1e3,
        drained && finalExit.status() == 0 ? "MET" : "NOT MET",
        leftContainers, gatewayId, leftDirs.size(), clean ? "MET" : "NOT MET",
        stuck, REQUEST_BOUND.toSeconds(), broken, stuck == 0 && broken == 0 ? "MET" : "NOT MET",
        memoryFlat ? "MET" : "NOT MET",
        loadAverage());
  }

  private String memoryRows() {
    StringBuilder rows = new StringBuilder();
    for (Map.Entry<Integer, List<Sample>> p : byProcess().entrySet()) {
      List<Sample> s = p.getValue();
      long first = s.get(0).atNanos();
      long last = s.get(s.size() - 1).atNanos();
      rows.append(row(p.getKey(), "first minute", s.stream().filter(x -> x.atNanos() - first <= 60e9).toList()));
      rows.append(row(p.getKey(), "last minute", s.stream().filter(x -> last - x.atNanos() <= 60e9).toList()));
    }
    return rows.toString();
  }

  private boolean memoryFlat() {
    for (List<Sample> s : byProcess().values()) {
      long first = s.get(0).atNanos();
      long last = s.get(s.size() - 1).atNanos();
      double a = s.stream().filter(x -> x.atNanos() - first <= 60e9).mapToLong(Sample::heapBytes).average().orElse(0);
      double b = s.stream().filter(x -> last - x.atNanos() <= 60e9).mapToLong(Sample::heapBytes).average().orElse(0);
      if (b > a * 1.2 + 16 * 1048576.0) {
        return false;
      }
    }
    return !memory.isEmpty();
  }

  private Map<Integer, List<Sample>> byProcess() {
    return memory.stream().collect(Collectors.groupingBy(Sample::process, TreeMap::new, Collectors.toList()));
  }

  private String row(int process, String window, List<Sample> s) {
    return String.format(Locale.ROOT, "| %d | %s (%.0f–%.0f s) | %d | %.1f | %.1f |%n", process, window,
        seconds(s.get(0).atNanos()), seconds(s.get(s.size() - 1).atNanos()), s.size(),
        s.stream().mapToLong(Sample::heapBytes).average().orElse(0) / 1048576.0,
        s.stream().mapToLong(Sample::rssBytes).average().orElse(0) / 1048576.0);
  }

  // ---------------------------------------------------------------- helpers

  private void awaitRunClock(double fraction) throws InterruptedException {
    long at = t0 + (long) (fraction * SECONDS * 1e9);
    long now = System.nanoTime();
    if (at > now) {
      Thread.sleep(Duration.ofNanos(at - now));
    }
  }

  private double seconds(long nanos) {
    return (nanos - t0) / 1e9;
  }

  private static String checkOf(String readyz, String check) {
    try {
      return new JsonObject(readyz).getJsonObject("checks").getJsonObject(check).encode();
    } catch (RuntimeException e) {
      return readyz.length() > 200 ? readyz.substring(0, 200) : readyz;
    }
  }

  private static String outcomes(Map<String, Long> counts) {
    return counts.entrySet().stream().map(e -> e.getValue() + " " + e.getKey()).collect(Collectors.joining(", "));
  }

  private void ingest() throws IOException, InterruptedException {
    String[][] docs = {
        {"Sandbox restarts", "# Sandbox restarts\n\nWhen a sandbox container dies, the analysis that used it fails with a"
            + " typed error and the warm pool starts a replacement.\n\n## Faults\n\nA killed container is noticed by"
            + " the gateway when the gRPC stream ends."},
        {"Database restarts", "# Database restarts\n\nAfter PostgreSQL restarts, the pool opens new connections."
            + "\n\n## Readiness\n\nThe readiness probe fails while the database is unreachable."}};
    for (String[] d : docs) {
      JsonObject body = new JsonObject().put("title", d[0]).put("uri", "soak/" + d[0].replace(' ', '-') + ".md")
          .put("content", d[1]).put("content_type", "text/markdown");
      HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri("/v1/documents"))
          .header("Authorization", "Bearer " + key).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(body.encode())).build(), HttpResponse.BodyHandlers.ofString());
      if (r.statusCode() != 201 && r.statusCode() != 200) {
        throw new IllegalStateException("ingest: " + r.statusCode() + " " + r.body());
      }
    }
  }

  private JsonObject admin(String path, JsonObject body) throws IOException, InterruptedException {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri(path)).header("Authorization", "Bearer " + ADMIN_TOKEN)
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body.encode())).build(),
        HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 201) {
      throw new IllegalStateException(path + ": " + r.statusCode() + " " + r.body());
    }
    return new JsonObject(r.body());
  }

  private URI uri(String path) {
    return URI.create("http://127.0.0.1:" + gateway.port() + path);
  }

  private static List<Container> containers(String dockerHost, String gatewayId) throws IOException {
    try (DockerClient docker = ContainerLauncher.connect(dockerHost)) {
      return docker.listContainersCmd().withShowAll(true)
          .withLabelFilter(Map.of(ContainerLauncher.LABEL_GATEWAY, gatewayId)).exec();
    }
  }

  private static int freePort() throws IOException {
    try (var s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private static String loadAverage() {
    try {
      String[] parts = Files.readString(Path.of("/proc/loadavg")).split(" ");
      return parts[0] + ", " + parts[1] + ", " + parts[2];
    } catch (IOException | RuntimeException e) {
      return "unknown";
    }
  }

  private static int setting(String property, String variable, int fallback) {
    String value = System.getProperty(property, System.getenv(variable));
    return value == null || value.isBlank() ? fallback : Integer.parseInt(value.trim());
  }
}
