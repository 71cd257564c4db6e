package dev.quarry.bench;

import dev.quarry.config.Config;
import dev.quarry.gateway.Gateway;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One tenant at its limits must not slow the others. A quiet tenant's search latency is measured
 * alone, then again while a noisy tenant, already past its requests per minute, keeps sending far
 * more than its quota: its requests are refused (429) before any database or model work, so the
 * quiet tenant's figures should stay within 20% of its solo ones.
 */
final class TenantIsolationBench {
  private static final String ADMIN_TOKEN = "bench-admin-token-0123456789";
  private static final int DOCUMENTS = 12;
  private static final int QUIET_QUERIES = 150;
  /** The noisy tenant's quota, and what it sends: 100 times its quota, spread over the run. */
  private static final int NOISY_RPM = 120;
  private static final int NOISY_PER_SECOND = Integer.getInteger("bench.noisy.rps", 200);
  private static final List<String> QUERIES = List.of(
      "When does the first ferry leave?", "harbour dues for cargo vessels", "crew training schedule",
      "fuel consumption per crossing", "timetable changes in winter", "how many passengers in summer",
      "safety drill on the car deck", "ticket prices for bicycles", "dog policy on board",
      "maintenance of the ramps");

  private static final int ROUNDS = 3;

  private final Vertx vertx = Vertx.vertx();
  /** The quiet tenant's client (and the set-up's); the noisy tenant has its own connections. */
  private WebClient client;
  private WebClient noisyClient;

  String run() throws Exception {
    try (BenchDatabase db = BenchDatabase.fresh("tenants", true)) {
      Config base = db.config().withHttpPort(0).withDataDir(java.nio.file.Files.createTempDirectory("quarry-bench-tenants"));
      Config config = base.withTenancy(base.tenancy().withAdminToken(ADMIN_TOKEN));
      Gateway gateway = new Gateway(config);
      try {
        vertx.deployVerticle(gateway).await();
        client = WebClient.create(vertx, new WebClientOptions().setDefaultHost("127.0.0.1")
            .setDefaultPort(gateway.port()));
        noisyClient = WebClient.create(vertx, new WebClientOptions().setDefaultHost("127.0.0.1")
            .setDefaultPort(gateway.port()));
        String quiet = tenant("quiet");
        String noisyTenantId = tenantId("noisy");
        String noisy = key(noisyTenantId);
        check(client.put("/v1/admin/tenants/" + noisyTenantId + "/quotas").bearerTokenAuthentication(ADMIN_TOKEN)
            .sendJsonObject(new JsonObject().put("requests_per_minute", NOISY_RPM)).await(), 200);
        for (int i = 0; i < DOCUMENTS; i++) {
          ingest(quiet, i);
        }
        // Warm-up: every query's vector is then in the gateway's cache, so both phases measure the
        // same work (search, not the embedding model).
        for (String q : QUERIES) {
          search(quiet, q);
        }
        // The noisy tenant spends its whole minute's quota first, so that the run sees it at its limit.
        for (int i = 0; i < NOISY_RPM; i++) {
          search(noisy, QUERIES.get(i % QUERIES.size()));
        }
        // Alone and with the noisy tenant in alternating rounds, so that drift in the machine's
        // load (it is shared) falls on both alike.
        AtomicLong served = new AtomicLong();
        AtomicLong refused = new AtomicLong();
        AtomicLong other = new AtomicLong();
        double[] soloMillis = new double[0];
        double[] loudMillis = new double[0];
        double noisySeconds = 0;
        long period = Math.max(1, 1000 / NOISY_PER_SECOND);
        int perTick = Math.max(1, NOISY_PER_SECOND / (int) (1000 / period));
        for (int round = 0; round < ROUNDS; round++) {
          soloMillis = concat(soloMillis, measure(quiet));
          // Its bucket refilled while it was silent: spend it again (untimed), so the round sees it at its limit.
          drain(noisy);
          long timer = vertx.setPeriodic(period, id -> {
            for (int i = 0; i < perTick; i++) {
              noisyClient.post("/v1/search").bearerTokenAuthentication(noisy)
                  .sendJsonObject(new JsonObject().put("query", QUERIES.get(i % QUERIES.size())).put("limit", 10))
                  .onSuccess(r -> (r.statusCode() == 200 ? served : r.statusCode() == 429 ? refused : other).incrementAndGet())
                  .onFailure(e -> other.incrementAndGet());
            }
          });
          long noisyStart = System.nanoTime();
          try {
            loudMillis = concat(loudMillis, measure(quiet));
          } finally {
            vertx.cancelTimer(timer);
          }
          noisySeconds += (System.nanoTime() - noisyStart) / 1e9;
        }
        Percentiles solo = Percentiles.of(soloMillis);
        Percentiles loud = Percentiles.of(loudMillis);
        System.out.printf(Locale.ROOT, "  quiet tenant alone: p50 %.1f ms, p95 %.1f ms%n", solo.p50(), solo.p95());
        System.out.printf(Locale.ROOT, "  quiet tenant with a noisy one: p50 %.1f ms, p95 %.1f ms; noisy: %d served, %d refused (429), %d other in %.1f s%n",
            loud.p50(), loud.p95(), served.get(), refused.get(), other.get(), noisySeconds);
        double p50Ratio = loud.p50() / solo.p50();
        double meanRatio = loud.mean() / solo.mean();
        StringBuilder md = new StringBuilder();
        md.append(String.format(Locale.ROOT,
            "A quiet tenant's searches (%d queries over %d small documents, query vectors cached so both runs do the same work),"
                + " alone and while a noisy tenant, past its quota of %d requests per minute, sends %d searches per second"
                + " (%.0f times its quota), in " + ROUNDS + " alternating rounds. Gateway and clients (one per tenant) in one process.%n%n",
            QUIET_QUERIES, DOCUMENTS, NOISY_RPM, NOISY_PER_SECOND, NOISY_PER_SECOND * 60.0 / NOISY_RPM));
        md.append(Percentiles.header()).append('\n');
        md.append(solo.row("quiet tenant alone")).append('\n');
        md.append(loud.row("quiet tenant, noisy tenant at its limit")).append("\n\n");
        md.append(String.format(Locale.ROOT, "- noisy tenant in %.1f s: %d served, %d refused with 429, %d other%n",
            noisySeconds, served.get(), refused.get(), other.get()));
        md.append("- load average of the machine (1, 5, 15 min) at the end: " + loadAverage()
            + "; on a shared box every figure here moves with it\n");
        md.append(String.format(Locale.ROOT, "- quiet tenant with the noisy one / alone: p50 x%.2f, mean x%.2f (target: within 20%%): %s%n",
            p50Ratio, meanRatio, p50Ratio <= 1.2 ? "met" : "NOT met"));
        vertx.close().await();
        md.append(new NoisyNeighbourBench().run());
        return md.toString();
      } finally {
        vertx.close(); // a second close (after the noisy-neighbour part) does nothing
      }
    }
  }

  private static String loadAverage() {
    try {
      String[] parts = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).split(" ");
      return parts[0] + ", " + parts[1] + ", " + parts[2];
    } catch (java.io.IOException | RuntimeException e) {
      return "unknown";
    }
  }

  private void drain(String key) {
    while (noisyClient.post("/v1/search").bearerTokenAuthentication(key)
        .sendJsonObject(new JsonObject().put("query", QUERIES.get(0)).put("limit", 10)).await().statusCode() == 200) {
      // served from what the bucket held
    }
  }

  private static double[] concat(double[] a, double[] b) {
    double[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  private double[] measure(String key) {
    double[] millis = new double[QUIET_QUERIES / ROUNDS];
    for (int i = 0; i < millis.length; i++) {
      long start = System.nanoTime();
      search(key, QUERIES.get(i % QUERIES.size()));
      millis[i] = (System.nanoTime() - start) / 1e6;
    }
    return millis;
  }

  private void search(String key, String query) {
    HttpResponse<Buffer> r = client.post("/v1/search").bearerTokenAuthentication(key)
        .sendJsonObject(new JsonObject().put("query", query).put("limit", 10)).await();
    check(r, 200);
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
    check(r, 201);
    return r.bodyAsJsonObject().getString("id");
  }

  private String tenant(String name) {
    return key(tenantId(name));
  }

  private String key(String tenantId) {
    HttpResponse<Buffer> r = client.post("/v1/admin/tenants/" + tenantId + "/keys").bearerTokenAuthentication(ADMIN_TOKEN)
        .sendJsonObject(new JsonObject().put("name", "bench")).await();
    check(r, 201);
    return r.bodyAsJsonObject().getString("api_key");
  }

  private static void check(HttpResponse<Buffer> r, int status) {
    if (r.statusCode() != status) {
      throw new IllegalStateException("expected " + status + ", got " + r.statusCode() + ": " + r.bodyAsString());
    }
  }
}
