package dev.quarry.bench;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The noisy-neighbour benchmark (issue 33; issue 14's cases with it): one tenant does its worst on
 * memory, disk, callbacks and CPU, one attack at a time, while a quiet tenant searches, ingests a
 * small file and runs a cell ({@link QuietTenant}); the quiet tenant is measured alone before each
 * attack and under it, in turns. The gateway is this checkout's build run as a process of its own
 * ({@link SoakGateway}) with the pod's heap and the settings of {@code k8s/base/configmap.yaml},
 * over real HTTP, its sandboxes on the real runner ({@code QUARRY_SANDBOX_IMAGE}) with their run
 * directory a 16 MiB tmpfs as the pod's is.
 *
 * <p>System properties: {@code bench.tenants.phaseSeconds} (15: each measured phase),
 * {@code bench.tenants.port} (0: free ports; else it and the next, for the metrics),
 * {@code bench.tenants.heap} (2304m: 75% of the pod's 3 GiB, as {@code -XX:MaxRAMPercentage=75}
 * gives it), {@code bench.tenants.cases} (a comma-separated subset of the cases' first words).
 */
final class NoisyNeighbourBench {
  private static final String ADMIN_TOKEN = "bench-admin-token-0123456789";
  static final Duration PHASE = Duration.ofSeconds(Integer.getInteger("bench.tenants.phaseSeconds", 15));
  private static final int PORT = Integer.getInteger("bench.tenants.port", 0);
  static final String HEAP = System.getProperty("bench.tenants.heap", "2304m");
  static final long RUN_DIR_BYTES = 16L << 20;
  /** The noisy tenant's share of the pod's 16 sandboxes (QUARRY_SANDBOX_TENANT_SHARE_PERCENT, 50). */
  private static final int SHARE = 8;
  /**
   * The sizes (characters, 3 bytes each: {@link HostileFiles#longWords}) of the documents the noisy
   * tenant scopes its sandboxes to: about 19 MiB of copies in all, halving down to one page a file.
   */
  private static final int[] LADDER = {1_280_000, 640_000, 640_000, 320_000, 160_000, 80_000, 40_000, 20_000, 10_000,
      5_000, 2_500, 1_250, 1_250, 640, 640, 640, 640, 640};
  /** Its large document: about 10 MB of {@code items.jsonl}. */
  private static final int BIG_DOCUMENT_CHARS = 3_300_000;

  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5)).build();
  private SoakGateway gateway;
  private int port;
  private final String gatewayId = "bench-neighbours-" + UUID.randomUUID().toString().substring(0, 8);

  /** One attack's turn: the quiet tenant alone just before, then under it; what the attack did; the gateway's heap. */
  record Case(Attack attack, QuietTenant.Phase alone, QuietTenant.Phase attacked, String check, Heap aloneHeap,
      Heap attackedHeap, String note) {}

  /**
   * The heap's peak use sampled during a phase, its old generation right after a full GC at the
   * phase's end, and the process' peak resident set (heap, direct buffers and the rest: what the
   * pod's 3 GiB limit is checked against).
   */
  record Heap(long peakBytes, long oldGenAfterGcBytes, long peakRssBytes) {}

  String run() throws Exception {
    Vertx vertx = Vertx.vertx();
    Path work = Files.createTempDirectory("quarry-bench-neighbours");
    Path data = Files.createDirectories(work.resolve("data"));
    Path runDir = Files.createDirectories(work.resolve("run"));
    List<Path> mounted = new ArrayList<>();
    BenchModelServer model = null;
    long benchStart = System.nanoTime();
    try (BenchDatabase db = BenchDatabase.fresh("neighbours", true)) {
      // The pod's layout: the data directory and the sandboxes' run directory each a filesystem of
      // its own (so a scoped sandbox's documents are copied, not linked), the run directory 16 MiB.
      mount(data, "size=2g", mounted);
      mount(runDir, "size=" + (RUN_DIR_BYTES >> 20) + "m", mounted);
      model = new BenchModelServer(vertx, List.of());
      port = PORT == 0 ? freePort() : PORT;
      int metricsPort = PORT == 0 ? freePort() : PORT + 1;
      gateway = new SoakGateway(env(db, data, runDir, model, gatewayId), port, metricsPort, work.resolve("gateway.log"),
          List.of("-Xmx" + HEAP, "--add-modules", "jdk.incubator.vector"));
      Duration up = gateway.start(Duration.ofSeconds(180));
      System.out.printf(Locale.ROOT, "  gateway up in %.1f s (pid %d, log %s)%n", up.toMillis() / 1e3, gateway.pid(),
          work.resolve("gateway.log"));

      long setupStart = System.nanoTime();
      String quietKey = key(tenant("quiet"));
      String noisyKey = key(tenant("noisy"));
      List<String> noisyNotes = new ArrayList<>();
      for (int i = 0; i < 12; i++) {
        ingestJson(quietKey, ferryNotes(i), "notes-" + i + ".md");
        noisyNotes.add(ingestJson(noisyKey, ferryNotes(i), "notes-" + i + ".md"));
      }
      String scoped = ingestJson(quietKey, ferryNotes(99), "quiet-scope.md");
      String big = ingestFile(noisyKey, "ledger-big.txt", HostileFiles.longWords(BIG_DOCUMENT_CHARS, 0));
      long bigItems = get(noisyKey, "/v1/documents/" + big + "/items").length;
      List<SandboxAttacks.Doc> ladder = new ArrayList<>();
      for (int i = 0; i < LADDER.length; i++) {
        String id = ingestFile(noisyKey, "ledger-" + i + ".txt", HostileFiles.longWords(LADDER[i], i + 1));
        ladder.add(new SandboxAttacks.Doc(id, copyBytes(noisyKey, id)));
      }
      search(noisyKey); // its search copies are built while the quiet tenant warms up
      QuietTenant quiet = new QuietTenant(port, quietKey, scoped);
      quiet.warmUp();
      double setupSeconds = (System.nanoTime() - setupStart) / 1e9;
      System.out.printf(Locale.ROOT, "  set up in %.0f s: the noisy tenant's large document's items %.1f MB, its"
          + " scoped documents' copies %.1f MiB%n", setupSeconds, bigItems / 1e6,
          ladder.stream().mapToLong(SandboxAttacks.Doc::copyBytes).sum() / 1048576.0);

      Attack.Target target = new Attack.Target(port, noisyKey, http, () -> Scrape.of(gateway.metrics().body()));
      List<Attack> attacks = List.of(
          new RequestAttacks.QuotaFlood(target),
          new SandboxAttacks.CallbackFlood(target, SHARE, noisyNotes),
          new SandboxAttacks.BusySandboxes(target, SHARE),
          new SandboxAttacks.ScopedHolds(target, ladder, SHARE, RUN_DIR_BYTES, runDir, model),
          new RequestAttacks.HeldBodies(target),
          new RequestAttacks.UnreadResponses(target, big, bigItems),
          // Last: its conversions go on in the gateway after their clients are gone.
          new RequestAttacks.GridIngests(target));
      String only = System.getProperty("bench.tenants.cases", "");
      List<Case> cases = new ArrayList<>();
      List<Attack> chosen = attacks.stream().filter(a -> only.isBlank() || java.util.Arrays.stream(only.split(","))
          .anyMatch(w -> a.name().toLowerCase(Locale.ROOT).startsWith(w.strip().toLowerCase(Locale.ROOT)))).toList();
      for (int i = 0; i < chosen.size(); i++) {
        cases.add(turn(chosen.get(i), quiet, runDir, i == chosen.size() - 1));
      }
      double seconds = (System.nanoTime() - benchStart) / 1e9;
      return NeighbourReport.markdown(cases, setupSeconds, seconds, bigItems, loadAverage());
    } finally {
      if (gateway != null && gateway.alive()) {
        // Its drain would wait for the hostile conversions: SIGTERM, then SIGKILL after 20 s.
        gateway.stop(Duration.ofSeconds(20));
      }
      removeContainers(gatewayId);
      if (model != null) {
        model.close();
      }
      vertx.close().await();
      for (int i = mounted.size() - 1; i >= 0; i--) {
        run("umount", "-l", mounted.get(i).toString());
      }
    }
  }

  /** The gateway's settings: the pod's (k8s/base/configmap.yaml), on this machine's database and engine. */
  private static Map<String, String> env(BenchDatabase db, Path data, Path runDir, BenchModelServer model,
      String gatewayId) {
    Map<String, String> env = new HashMap<>();
    env.put("QUARRY_PG_DATABASE", db.config().pgDatabase());
    env.put("QUARRY_PG_POOL_SIZE", "16");
    env.put("QUARRY_DATA_DIR", data.toString());
    env.put("QUARRY_SANDBOX_RUN_DIR", runDir.toString());
    env.put("QUARRY_SANDBOX_IMAGE", System.getenv().getOrDefault("QUARRY_SANDBOX_IMAGE", "quarry-sandbox:latest"));
    env.put("QUARRY_SANDBOX_POOL_PER_TENANT", "2");
    env.put("QUARRY_SANDBOX_MAX_ACTIVE", "16");
    env.put("QUARRY_SANDBOX_WAIT_MS", "10000");
    // Not QUARRY_SANDBOX_REAP_ALL_ON_START: the engine here is shared, not the pod's own.
    env.put("QUARRY_DRAIN_GRACE_SECONDS", "120");
    env.put("QUARRY_LOG_FORMAT", "json");
    env.put("QUARRY_GATEWAY_ID", gatewayId);
    env.put("QUARRY_ADMIN_TOKEN", ADMIN_TOKEN);
    env.put("QUARRY_MODEL_BASE_URL", model.baseUrl());
    env.put("QUARRY_MODEL_API_KEY", "bench-key");
    env.put("QUARRY_MODEL", "bench-scripted");
    return env;
  }

  /** The quiet tenant alone, then under the attack; what the attack did; then the gateway back to rest. */
  private Case turn(Attack attack, QuietTenant quiet, Path runDir, boolean last) throws Exception {
    String note = "";
    if (!gateway.alive()) {
      gateway.start(Duration.ofSeconds(180));
      note = "the gateway had exited and was started again before this case";
    }
    System.out.printf(Locale.ROOT, "  %s: alone%n", attack.name());
    HeapSampler aloneSampler = new HeapSampler();
    QuietTenant.Phase alone = quiet.run(PHASE);
    Heap aloneHeap = aloneSampler.stop();
    System.out.printf(Locale.ROOT, "  %s: starting the attack%n", attack.name());
    String check;
    Heap attackedHeap;
    QuietTenant.Phase attacked;
    try {
      attack.start();
      System.out.printf(Locale.ROOT, "  %s: measuring%n", attack.name());
      HeapSampler sampler = new HeapSampler();
      attacked = quiet.run(PHASE);
      check = attack.check();
      attackedHeap = sampler.stop();
    } finally {
      attack.stop();
    }
    System.out.printf(Locale.ROOT, "  %s: %s%n  heap peak %d MiB, old gen after GC %d MiB, RSS peak %d MiB; quiet"
        + " failures %d of %d%n", attack.name(), check, attackedHeap.peakBytes() >> 20,
        attackedHeap.oldGenAfterGcBytes() >> 20, attackedHeap.peakRssBytes() >> 20, attacked.failed(), attacked.requests());
    // After the last case the gateway is stopped, not waited for.
    String recovered = last ? "" : recover(runDir);
    if (!recovered.isEmpty()) {
      note = (note.isEmpty() ? "" : note + "; ") + recovered;
    }
    return new Case(attack, alone, attacked, check, aloneHeap, attackedHeap, note);
  }

  /** Samples the gateway's heap every half second until stopped; then a full GC and the old generation after it. */
  private final class HeapSampler {
    private final AtomicBoolean on = new AtomicBoolean(true);
    private final AtomicLong peak = new AtomicLong();
    private final AtomicLong peakRss = new AtomicLong();
    private final Thread thread = Thread.ofVirtual().name("heap-sampler").start(() -> {
      while (on.get()) {
        peakRss.accumulateAndGet(rss(), Math::max);
        Scrape s = Scrape.of(gateway.metrics().body());
        peak.accumulateAndGet((long) s.sum("jvm_memory_used_bytes", "area=\"heap\""), Math::max);
        try {
          Thread.sleep(500);
        } catch (InterruptedException e) {
          return;
        }
      }
    });

    Heap stop() throws IOException, InterruptedException {
      on.set(false);
      thread.join();
      long oldGen = -1;
      if (gateway.alive()) {
        gateway.gc();
        Scrape after = Scrape.of(gateway.metrics().body());
        // A gateway too busy to answer its metrics port leaves the figure unknown, not 0.
        oldGen = after.empty() ? -1 : (long) after.sum("jvm_memory_used_bytes", "id=\"G1 Old Gen\"");
      }
      return new Heap(peak.get(), oldGen, peakRss.get());
    }

    private long rss() {
      try {
        for (String line : Files.readAllLines(Path.of("/proc/" + gateway.pid() + "/status"))) {
          if (line.startsWith("VmRSS:")) {
            return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
          }
        }
      } catch (IOException | RuntimeException e) {
        // the process is gone: nothing to add
      }
      return 0;
    }
  }

  /**
   * Until no sandbox is attached, the run directory is all but empty again (its sandboxes' copies
   * removed) and {@code /readyz} answers within a second, at most 90 s; what did not come back.
   */
  private String recover(Path runDir) throws InterruptedException, IOException {
    long start = System.nanoTime();
    long deadline = start + TimeUnit.SECONDS.toNanos(90);
    while (System.nanoTime() < deadline && gateway.alive()) {
      Scrape s = Scrape.of(gateway.metrics().body());
      long t0 = System.nanoTime();
      int status = gateway.get("/readyz").statusCode();
      if (!s.empty() && s.sum("quarry_sandboxes_active") == 0 && status == 200
          && System.nanoTime() - t0 < 1_000_000_000L
          && Files.getFileStore(runDir).getUsableSpace() >= RUN_DIR_BYTES - (1 << 20)) {
        return "";
      }
      Thread.sleep(500);
    }
    return gateway.alive() ? "the gateway was not back at rest 90 s after the attack stopped" : "the gateway exited";
  }

  // ---------------------------------------------------------------- set-up over the API

  private String tenant(String name) throws IOException, InterruptedException {
    return post(ADMIN_TOKEN, "/v1/admin/tenants", new JsonObject().put("name", name), 201).getString("id");
  }

  private String key(String tenantId) throws IOException, InterruptedException {
    return post(ADMIN_TOKEN, "/v1/admin/tenants/" + tenantId + "/keys", new JsonObject().put("name", "bench"), 201)
        .getString("api_key");
  }

  private String ingestJson(String key, String content, String uri) throws IOException, InterruptedException {
    return post(key, "/v1/documents", new JsonObject().put("uri", uri).put("content_type", "text/markdown")
        .put("content", content), 201).getString("id");
  }

  private String ingestFile(String key, String name, String content) throws IOException, InterruptedException {
    String boundary = "bench" + UUID.randomUUID();
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    body.writeBytes(("--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + name
        + "\"\r\nContent-Type: text/plain\r\n\r\n").getBytes(StandardCharsets.UTF_8));
    body.writeBytes(content.getBytes(StandardCharsets.UTF_8));
    body.writeBytes(("\r\n--" + boundary + "--\r\n").getBytes(StandardCharsets.UTF_8));
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri("/v1/documents")).timeout(Duration.ofMinutes(5))
        .header("Authorization", "Bearer " + key).header("Content-Type", "multipart/form-data; boundary=" + boundary)
        .POST(HttpRequest.BodyPublishers.ofByteArray(body.toByteArray())).build(), HttpResponse.BodyHandlers.ofString());
    return checked(r, 201).getString("id");
  }

  private void search(String key) throws IOException, InterruptedException {
    post(key, "/v1/search", new JsonObject().put("query", "ferry timetable").put("limit", 10), 200);
  }

  /** What a sandbox scoped to the document copies: its four files, each rounded up to whole 4 KiB pages. */
  private long copyBytes(String key, String id) throws IOException, InterruptedException {
    long total = 4_096; // metadata.json: one page
    for (String file : new String[] {"items", "content", "toc"}) {
      total += (get(key, "/v1/documents/" + id + "/" + file).length + 4_095L) / 4_096 * 4_096;
    }
    return total;
  }

  private byte[] get(String key, String path) throws IOException, InterruptedException {
    HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(uri(path)).timeout(Duration.ofMinutes(2))
        .header("Authorization", "Bearer " + key).GET().build(), HttpResponse.BodyHandlers.ofByteArray());
    if (r.statusCode() != 200) {
      throw new IllegalStateException("GET " + path + ": " + r.statusCode());
    }
    return r.body();
  }

  private JsonObject post(String key, String path, JsonObject body, int status) throws IOException, InterruptedException {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri(path)).timeout(Duration.ofMinutes(2))
        .header("Authorization", "Bearer " + key).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body.encode())).build(), HttpResponse.BodyHandlers.ofString());
    return checked(r, status);
  }

  private static JsonObject checked(HttpResponse<String> r, int status) {
    if (r.statusCode() != status) {
      throw new IllegalStateException(r.request().method() + " " + r.request().uri().getPath() + ": expected " + status
          + ", got " + r.statusCode() + ": " + r.body());
    }
    return new JsonObject(r.body());
  }

  private URI uri(String path) {
    return URI.create("http://127.0.0.1:" + port + path);
  }

  static String ferryNotes(int i) {
    return "# Ferry notes " + i + "\n\n## Timetable\n\nThe first ferry leaves at 06:" + (10 + i % 50)
        + ". Harbour dues for cargo vessels are " + (100 + i) + " crowns.\n\n## Crew\n\nCrew training on the car deck"
        + " happens every " + (i % 7 + 1) + " weeks; fuel per crossing is " + (300 + i) + " litres.\n";
  }

  // ---------------------------------------------------------------- the machine

  private static void mount(Path dir, String size, List<Path> mounted) throws IOException, InterruptedException {
    run("mount", "-t", "tmpfs", "-o", size + ",mode=0755", "tmpfs", dir.toString());
    mounted.add(dir);
  }

  private static void run(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IOException(String.join(" ", command) + " failed (the bench runs as root, as ./quarry bench does): "
          + output.strip());
    }
  }

  /** What a gateway killed before its drain left on the engine: only its own containers, by their label. */
  private static void removeContainers(String gatewayId) throws IOException, InterruptedException {
    Process list = new ProcessBuilder("docker", "ps", "-aq", "--filter", "label=quarry.gateway=" + gatewayId)
        .redirectErrorStream(true).start();
    List<String> ids = new String(list.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines()
        .filter(l -> l.matches("[0-9a-f]{6,64}")).toList();
    list.waitFor(30, TimeUnit.SECONDS);
    if (!ids.isEmpty()) {
      List<String> rm = new ArrayList<>(List.of("docker", "rm", "-f"));
      rm.addAll(ids);
      run(rm.toArray(new String[0]));
    }
  }

  private static int freePort() throws IOException {
    try (var s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  static String loadAverage() {
    try {
      String[] parts = Files.readString(Path.of("/proc/loadavg")).split(" ");
      return parts[0] + ", " + parts[1] + ", " + parts[2];
    } catch (IOException | RuntimeException e) {
      return "unknown";
    }
  }
}
