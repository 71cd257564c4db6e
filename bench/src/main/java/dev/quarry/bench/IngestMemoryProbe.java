package dev.quarry.bench;

import dev.quarry.config.Config;
import dev.quarry.ingest.HostileFixtures;
import dev.quarry.ingest.IngestException;
import dev.quarry.ingest.IngestRequest;
import dev.quarry.ingest.IngestResult;
import dev.quarry.ingest.IngestService;
import dev.quarry.search.Embedder;
import dev.quarry.search.OnnxEmbedder;
import dev.quarry.store.Database;
import dev.quarry.store.DocumentsFs;
import dev.quarry.tenancy.Tenants;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One ingest in a JVM of its own, for {@link IngestMemoryBench}: {@code IngestMemoryProbe <database>
 * <fixture name | path> <warm-up paths...>}. It starts an {@link IngestService} as the gateway does
 * (its converters, the in-process model, PostgreSQL), ingests the warm-up files (so that no library
 * initialises inside the measured ingest), then the file through {@link IngestService#ingest}, and
 * prints one JSON line: the outcome, the bytes every thread allocated during the ingest, and the
 * heap's growth over what it held before (the peak of every heap pool, reset first, against what
 * was in use after a full collection). Only APIs that main has too: the bench runs this probe
 * against main's classes for the baseline.
 */
public final class IngestMemoryProbe {
  private IngestMemoryProbe() {}

  public static void main(String[] args) throws Exception {
    String database = args[0];
    String spec = args[1];
    String name;
    byte[] bytes;
    if (HostileFixtures.all().containsKey(spec)) {
      name = spec;
      bytes = HostileFixtures.all().get(spec).bytes();
    } else {
      name = Path.of(spec).getFileName().toString();
      bytes = Files.readAllBytes(Path.of(spec));
    }
    Config config = Config.fromEnv(System.getenv()).withDatabase(database);
    Vertx vertx = Vertx.vertx();
    Pool pool = Database.pool(vertx, config);
    Embedder model = new OnnxEmbedder(System.getenv().getOrDefault("QUARRY_EMBEDDING_MODEL", OnnxEmbedder.DEFAULT));
    Path documents = Files.createTempDirectory("ingest-memory-docs");
    IngestService ingest = new IngestService(vertx, pool, model, new DocumentsFs(vertx, pool, documents), config);
    String run = Long.toString(System.nanoTime(), 36);
    for (int i = 2; i < args.length; i++) {
      Path warm = Path.of(args[i]);
      try {
        ingest.ingest(Tenants.DEFAULT, new IngestRequest(warm.getFileName().toString(), "warm/" + run + "/" + i, null,
            null, Files.readAllBytes(warm))).toCompletionStage().toCompletableFuture().get();
      } catch (Exception e) {
        // A warm-up file refused still initialised its converter.
      }
    }

    var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    List<MemoryPoolMXBean> heap = ManagementFactory.getMemoryPoolMXBeans().stream()
        .filter(p -> p.getType() == MemoryType.HEAP).toList();
    System.gc();
    System.gc();
    long heldBefore = heap.stream().mapToLong(p -> p.getUsage().getUsed()).sum();
    heap.forEach(MemoryPoolMXBean::resetPeakUsage);
    long allocatedBefore = allAllocated(threads);
    long t0 = System.nanoTime();
    String outcome;
    String detail = "";
    try {
      IngestResult r = ingest.ingest(Tenants.DEFAULT, new IngestRequest(name, "measured/" + run + "/" + name, null,
          null, bytes)).toCompletionStage().toCompletableFuture().get(Long.getLong("bench.ingestmemory.timeout", 600),
          TimeUnit.SECONDS);
      outcome = r.status().name().toLowerCase() + " (" + r.itemCount() + " items, " + r.chunkCount() + " chunks)";
    } catch (TimeoutException e) {
      outcome = "still running after " + Long.getLong("bench.ingestmemory.timeout", 600) + " s";
    } catch (java.util.concurrent.ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof IngestException ie) {
        outcome = ie.reason().name().toLowerCase();
        detail = ie.getMessage();
      } else {
        outcome = "error " + cause.getClass().getSimpleName();
        detail = String.valueOf(cause.getMessage());
      }
    }
    long millis = (System.nanoTime() - t0) / 1_000_000;
    long allocated = allAllocated(threads) - allocatedBefore;
    long peak = heap.stream().mapToLong(p -> p.getPeakUsage().getUsed()).sum();
    System.out.println("PROBE " + new JsonObject()
        .put("file", name).put("bytes", bytes.length).put("outcome", outcome)
        .put("detail", detail.length() > 300 ? detail.substring(0, 300) : detail)
        .put("allocated", allocated).put("peak_growth", peak - heldBefore).put("millis", millis).encode());
    System.out.flush();
    Runtime.getRuntime().halt(0);
  }

  /** What every live thread allocated so far. */
  private static long allAllocated(com.sun.management.ThreadMXBean threads) {
    long sum = 0;
    for (long b : threads.getThreadAllocatedBytes(threads.getAllThreadIds())) {
      sum += Math.max(0, b);
    }
    return sum;
  }
}
