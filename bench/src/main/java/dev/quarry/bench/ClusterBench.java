package dev.quarry.bench;

import dev.quarry.support.GatewayCluster;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code ./quarry bench cluster} (issue 34): gateways as separate processes behind HAProxy on one
 * PostgreSQL ({@link GatewayCluster}, the tests' harness). First what a rate quota check costs a
 * request ({@link QuotaCheckBench}); then how many of a tenant's requests three replicas admit
 * against its quota, for this checkout and, when {@code -Dbench.cluster.baseline=JAR} names one, for
 * an earlier gateway jar run the same way (before issue 34 each replica counted alone); then the
 * throughput of analyses with one and with three replicas, and what limits it on this machine. How
 * late an analysis' events reach a follower on another replica is {@link ClusterEventsBench}, a
 * section of its own that {@code ./quarry bench cluster} writes next.
 */
final class ClusterBench {
  private static final long QUOTA = 600;
  private static final int BURST = 1800;
  private static final int SUSTAINED_SECONDS = Integer.getInteger("bench.cluster.sustained", 60);
  /** Requests per second in the sustained phase: twice the quota's rate. */
  private static final int SUSTAINED_RATE = (int) (2 * QUOTA / 60);
  private static final int ANALYSES = Integer.getInteger("bench.cluster.analyses", 60);
  private static final int ANALYSES_IN_FLIGHT = Integer.getInteger("bench.cluster.inflight", 12);
  private static final List<String> CELLS = List.of(
      "x = sum(range(1000))\nprint(x)",
      "y = [i * i for i in range(100)]\nprint(len(y), x)",
      "print('done', x + len(y))");

  String run() throws Exception {
    StringBuilder md = new StringBuilder();
    md.append("### What a quota check costs\n\n").append(part(() -> new QuotaCheckBench().run())).append('\n');
    md.append("### A tenant's requests across 3 replicas behind HAProxy\n\n");
    md.append(String.format(Locale.ROOT, "The tenant's `requests_per_minute` is %d. A burst of %d requests (16 at a"
        + " time) through the balancer, then %d s at %d requests a second (twice the quota's rate), counting the"
        + " admitted (200) and refused (429).%n%n", QUOTA, BURST, SUSTAINED_SECONDS, SUSTAINED_RATE));
    md.append("| gateway | burst: admitted of ").append(BURST).append(" | allowed by the quota | sustained: admitted in ")
        .append(SUSTAINED_SECONDS).append(" s | allowed | admitted / allowed |\n|---|---:|---:|---:|---:|---:|\n");
    md.append(part(() -> admitted("this checkout (cluster-wide)", null)));
    String baseline = System.getProperty("bench.cluster.baseline", "");
    if (!baseline.isBlank()) {
      md.append(part(() -> admitted("baseline: " + Path.of(baseline).getFileName() + " (per replica)", baseline)));
    }
    md.append("\n### Analyses with 1 and 3 replicas\n\n");
    md.append(String.format(Locale.ROOT, "%d analyses of %d cells each (scripted model, answers at once), %d in flight"
        + " through the balancer, after 12 to warm up; CPU is the machine's (/proc/stat) and the gateway processes'"
        + " own over the timed run.%n%n", ANALYSES, CELLS.size(), ANALYSES_IN_FLIGHT));
    md.append("| replicas | analyses/s | p50 s | p95 s | machine CPU busy | of which gateways | the rest (sandboxes,"
        + " PostgreSQL, engine, model) |\n|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int n : new int[] {1, 3}) {
      md.append(part(() -> analyses(n)));
    }
    return md.toString();
  }

  /** One part's figures, or a line saying why it has none: a part that fails keeps the others'. */
  private static String part(java.util.concurrent.Callable<String> measure) {
    try {
      return measure.call();
    } catch (Exception e) {
      e.printStackTrace();
      return "\n(this part failed: " + e + ")\n\n";
    }
  }

  /** One cluster's row of admitted requests: a burst, then a sustained phase. */
  private String admitted(String label, String jar) throws Exception {
    String before = System.getProperty("quarry.cluster.jar");
    if (jar != null) {
      System.setProperty("quarry.cluster.jar", jar);
    }
    try (GatewayCluster cluster = GatewayCluster.builder().replicas(3).start()) {
      GatewayCluster.Tenant t = cluster.createTenant("bench-rate");
      cluster.setQuotas(t.id(), new JsonObject().put("requests_per_minute", QUOTA));
      long t0 = System.nanoTime();
      int burst = burst(cluster, t.apiKey());
      double burstSeconds = (System.nanoTime() - t0) / 1e9;
      long t1 = System.nanoTime();
      int sustained = sustained(cluster, t.apiKey());
      double sustainedSeconds = (System.nanoTime() - t1) / 1e9;
      double burstAllowed = QUOTA + burstSeconds * QUOTA / 60;
      double sustainedAllowed = sustainedSeconds * QUOTA / 60;
      System.out.printf(Locale.ROOT, "%s: burst %d admitted (%.0f allowed), sustained %d admitted (%.0f allowed)%n",
          label, burst, burstAllowed, sustained, sustainedAllowed);
      return String.format(Locale.ROOT, "| %s | %d | %.0f | %d | %.0f | %.2f |%n", label, burst, burstAllowed,
          sustained, sustainedAllowed, sustained / sustainedAllowed);
    } finally {
      if (before == null) {
        System.clearProperty("quarry.cluster.jar");
      } else {
        System.setProperty("quarry.cluster.jar", before);
      }
    }
  }

  private static int burst(GatewayCluster cluster, String key) throws Exception {
    AtomicInteger admitted = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(16);
    try {
      List<Future<?>> sent = new ArrayList<>();
      for (int i = 0; i < BURST; i++) {
        sent.add(pool.submit(() -> {
          if (cluster.send("GET", "/v1/documents?limit=1", key, null).status() == 200) {
            admitted.incrementAndGet();
          }
        }));
      }
      for (Future<?> f : sent) {
        f.get(5, TimeUnit.MINUTES);
      }
    } finally {
      pool.shutdownNow();
    }
    return admitted.get();
  }

  private static int sustained(GatewayCluster cluster, String key) throws Exception {
    AtomicInteger admitted = new AtomicInteger();
    ScheduledExecutorService clock = Executors.newScheduledThreadPool(8);
    List<java.util.concurrent.ScheduledFuture<?>> sent = new ArrayList<>();
    try {
      long every = 1_000_000_000L / SUSTAINED_RATE;
      for (long i = 0; i < (long) SUSTAINED_SECONDS * SUSTAINED_RATE; i++) {
        sent.add(clock.schedule(() -> {
          if (cluster.send("GET", "/v1/documents?limit=1", key, null).status() == 200) {
            admitted.incrementAndGet();
          }
        }, i * every, TimeUnit.NANOSECONDS));
      }
      for (java.util.concurrent.ScheduledFuture<?> f : sent) {
        f.get(SUSTAINED_SECONDS + 120L, TimeUnit.SECONDS);
      }
    } finally {
      clock.shutdownNow();
    }
    return admitted.get();
  }

  /** Analyses through the balancer of an {@code n}-replica cluster: throughput and CPU. */
  private String analyses(int n) throws Exception {
    Vertx vertx = Vertx.vertx();
    BenchModelServer model = new BenchModelServer(vertx, CELLS);
    try (GatewayCluster cluster = GatewayCluster.builder().replicas(n)
        .setting("QUARRY_MODEL_BASE_URL", model.baseUrl())
        .setting("QUARRY_MODEL_API_KEY", "bench-key")
        .setting("QUARRY_MODEL", "bench-scripted")
        .setting("QUARRY_SANDBOX_IMAGE", System.getenv().getOrDefault("QUARRY_SANDBOX_IMAGE", "quarry-sandbox:latest"))
        .setting("QUARRY_SANDBOX_POOL_PER_TENANT", "2")
        // One tenant alone: it may use each replica's every sandbox slot.
        .setting("QUARRY_SANDBOX_TENANT_SHARE_PERCENT", "100")
        .start()) {
      GatewayCluster.Tenant t = cluster.createTenant("bench-analyses");
      cluster.setQuotas(t.id(), new JsonObject().put("requests_per_minute", 100_000).put("concurrent_analyses", 64)
          .put("concurrent_sandboxes", 1024));
      runAnalyses(cluster, t.apiKey(), 12);
      model.reset();
      long[] cpuBefore = machineCpu();
      double gatewaysBefore = gatewaysCpuSeconds(cluster);
      long t0 = System.nanoTime();
      List<Double> seconds = runAnalyses(cluster, t.apiKey(), ANALYSES);
      double wall = (System.nanoTime() - t0) / 1e9;
      long[] cpuAfter = machineCpu();
      double gateways = gatewaysCpuSeconds(cluster) - gatewaysBefore;
      double total = (cpuAfter[0] - cpuBefore[0]) / 100.0;
      double busy = (cpuAfter[1] - cpuBefore[1]) / 100.0;
      int cores = Runtime.getRuntime().availableProcessors();
      Percentiles p = Percentiles.of(seconds.stream().mapToDouble(Double::doubleValue).toArray());
      System.out.printf(Locale.ROOT, "%d replicas: %.2f analyses/s, p50 %.1f s; CPU busy %.0f%%, gateways %.0f%%%n", n,
          ANALYSES / wall, p.p50(), 100 * busy / total, 100 * gateways / (wall * cores));
      return String.format(Locale.ROOT, "| %d | %.2f | %.1f | %.1f | %.0f%% | %.0f%% | %.0f%% |%n", n, ANALYSES / wall,
          p.p50(), p.p95(), 100 * busy / total, 100 * gateways / (wall * cores),
          100 * (busy / total - gateways / (wall * cores)));
    } finally {
      model.close();
      vertx.close().await();
    }
  }

  /** {@code count} analyses, {@value #ANALYSES_IN_FLIGHT} at a time; each one's duration in seconds. */
  private static List<Double> runAnalyses(GatewayCluster cluster, String key, int count) throws Exception {
    List<Double> seconds = java.util.Collections.synchronizedList(new ArrayList<>());
    ExecutorService pool = Executors.newFixedThreadPool(ANALYSES_IN_FLIGHT);
    try {
      List<Future<?>> runs = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        int k = i;
        runs.add(pool.submit(() -> {
          long t0 = System.nanoTime();
          GatewayCluster.Response r = cluster.send(cluster.balancerUrl(), "POST", "/v1/analyses", key, new JsonObject()
              .put("question", "bench cluster analysis " + k + " " + System.nanoTime() + ": what do the cells print?")
              .encode(), Duration.ofMinutes(5));
          if (r.status() != 200 || !"succeeded".equals(r.json().getString("status"))) {
            throw new IllegalStateException("analysis " + k + ": " + r.status() + " " + r.body());
          }
          seconds.add((System.nanoTime() - t0) / 1e9);
          return null;
        }));
      }
      for (Future<?> f : runs) {
        f.get(10, TimeUnit.MINUTES);
      }
    } finally {
      pool.shutdownNow();
    }
    return seconds;
  }

  /** The machine's CPU jiffies: all, and all but idle and iowait (the first line of /proc/stat). */
  private static long[] machineCpu() throws java.io.IOException {
    String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
    long all = 0;
    for (int i = 1; i < f.length; i++) {
      all += Long.parseLong(f[i]);
    }
    long idle = Long.parseLong(f[4]) + Long.parseLong(f[5]);
    return new long[] {all, all - idle};
  }

  static double gatewaysCpuSeconds(GatewayCluster cluster) {
    double total = 0;
    for (int i = 0; i < cluster.size(); i++) {
      total += ProcessHandle.of(cluster.pid(i)).flatMap(h -> h.info().totalCpuDuration())
          .map(Duration::toNanos).orElse(0L) / 1e9;
    }
    return total;
  }
}
