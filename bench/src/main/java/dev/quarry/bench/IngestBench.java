package dev.quarry.bench;

import dev.quarry.ingest.IngestRequest;
import dev.quarry.ingest.IngestResult;
import dev.quarry.ingest.IngestService;
import dev.quarry.search.Embedder;
import dev.quarry.store.DocumentsFs;
import dev.quarry.tenancy.Tenants;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;

/**
 * Ingestion throughput: the whole pipeline (IngestService: convert, section tree, chunk, embed,
 * write) on generated Markdown documents, against the bare model embedding the very chunks the
 * pipeline produced, grouped per document as the pipeline embeds them, in the same process with the
 * same model instance.
 */
public final class IngestBench {
  /** Documents to generate; -Dbench.ingest.docs overrides (the model dominates the run time). */
  static final int DOCS = Integer.getInteger("bench.ingest.docs", 24);

  /** IngestService embeds a document's chunks in batches of this size; the bare side does the same. */
  static final int EMBED_BATCH = 32;

  private final BenchPaths paths;
  private final Embedder model;

  public IngestBench(BenchPaths paths, Embedder model) {
    this.paths = paths;
    this.model = model;
  }

  /** Markdown reports: a title, sections of real Cranfield abstracts as paragraphs. */
  static List<String> generate(TestCollection source, int count, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    List<String> docs = new ArrayList<>(count);
    for (int d = 0; d < count; d++) {
      StringBuilder md = new StringBuilder("# Report ").append(d + 1).append("\n\n");
      int sections = 3 + random.nextInt(4);
      for (int s = 0; s < sections; s++) {
        md.append("## Section ").append(s + 1).append("\n\n");
        int paragraphs = 1 + random.nextInt(3);
        for (int p = 0; p < paragraphs; p++) {
          md.append(source.docs().get(random.nextInt(source.docs().size())).text()).append("\n\n");
        }
      }
      docs.add(md.toString());
    }
    return docs;
  }

  public String run() throws Exception {
    TestCollection cranfield = TestCollections.cranfield(paths.retrieval());
    List<String> documents = generate(cranfield, DOCS, 7);
    long bytes = documents.stream().mapToLong(d -> d.getBytes(StandardCharsets.UTF_8).length).sum();
    // Warm the model on realistic batch shapes before either side is timed.
    model.embedPassages(cranfield.docs().subList(0, 8).stream().map(TestCollection.Doc::text).toList());

    int chunks = 0;
    double pipelineSeconds;
    MemorySampler pipelineMemory;
    UUID warmUp;
    Map<String, List<String>> chunkTexts = new LinkedHashMap<>();
    try (BenchDatabase db = BenchDatabase.fresh("ingest", true)) {
      Vertx vertx = Vertx.vertx();
      Pool pool = dev.quarry.store.Database.pool(vertx, db.config());
      try {
        IngestService ingest = new IngestService(vertx, pool, model,
            new DocumentsFs(vertx, pool, paths.work().resolve("ingest-documents")), db.config());
        System.out.printf("ingest: %d generated Markdown documents, %,d bytes%n", documents.size(), bytes);
        // One untimed ingest warms the converter, the chunker and the SQL paths; its chunks are not counted.
        warmUp = ingest.ingest(Tenants.DEFAULT, new IngestRequest("warm-up.md", "bench/warm-up.md", null,
                "text/markdown", generate(cranfield, 1, 99).get(0).getBytes(StandardCharsets.UTF_8)))
            .toCompletionStage().toCompletableFuture().get().documentId();
        pipelineMemory = new MemorySampler();
        long start = System.nanoTime();
        for (int i = 0; i < documents.size(); i++) {
          IngestResult r = ingest.ingest(Tenants.DEFAULT, new IngestRequest("report-" + i + ".md",
                  "bench/report-" + i + ".md", null, "text/markdown", documents.get(i).getBytes(StandardCharsets.UTF_8)))
              .toCompletionStage().toCompletableFuture().get();
          chunks += r.chunkCount();
        }
        pipelineSeconds = (System.nanoTime() - start) / 1e9;
        pipelineMemory.close();
      } finally {
        pool.close().toCompletionStage().toCompletableFuture().get();
        vertx.close().toCompletionStage().toCompletableFuture().get();
      }
      try (Connection c = db.jdbc(); PreparedStatement s = c.prepareStatement(
          "SELECT document_id, content FROM chunks WHERE document_id <> ? ORDER BY document_id, ordinal")) {
        s.setObject(1, warmUp);
        try (ResultSet rs = s.executeQuery()) {
          while (rs.next()) {
            chunkTexts.computeIfAbsent(rs.getString(1), k -> new ArrayList<>()).add(rs.getString(2));
          }
        }
      }
    }
    int stored = chunkTexts.values().stream().mapToInt(List::size).sum();
    if (stored != chunks) {
      throw new IllegalStateException("the pipeline reported " + chunks + " chunks but stored " + stored);
    }
    MemorySampler bareMemory = new MemorySampler();
    long start = System.nanoTime();
    for (List<String> texts : chunkTexts.values()) {
      for (int i = 0; i < texts.size(); i += EMBED_BATCH) {
        model.embedPassages(texts.subList(i, Math.min(texts.size(), i + EMBED_BATCH)));
      }
    }
    double bareSeconds = (System.nanoTime() - start) / 1e9;
    bareMemory.close();

    double pipelineRate = chunks / pipelineSeconds;
    double bareRate = chunks / bareSeconds;
    double ratio = pipelineRate / bareRate;
    System.out.printf(Locale.ROOT, "  pipeline %.1f chunks/s, bare model %.1f chunks/s (%.0f%%)%n",
        pipelineRate, bareRate, ratio * 100);
    long totalChars = chunkTexts.values().stream().flatMap(List::stream).mapToLong(String::length).sum();
    return String.format(Locale.ROOT, """
        %d generated Markdown documents (%,d bytes; sections of real Cranfield abstracts), ingested one
        after another through `IngestService` into a fresh database: %d chunks, %,d characters of
        chunk text. Then the bare model (`OnnxEmbedder.embedPassages`, the same instance, warmed up
        first on a batch of real abstracts; one untimed warm-up document ingested first) embeds exactly those chunks, per document in batches of 32 as the pipeline does. Memory:
        peak RSS and peak JVM heap in use, sampled every 20 ms during each phase (JVM max heap
        %d MiB).

        | phase | chunks | seconds | chunks/s | peak RSS MiB | peak heap MiB |
        |---|---:|---:|---:|---:|---:|
        | pipeline (convert, chunk, embed, write) | %d | %.1f | %.2f | %.0f | %.0f |
        | bare model (embedPassages) | %d | %.1f | %.2f | %.0f | %.0f |

        ### Target

        - pipeline >= 80%% of bare model throughput: %.0f%%: %s
        """, documents.size(), bytes, chunks, totalChars, Runtime.getRuntime().maxMemory() / (1024 * 1024),
        chunks, pipelineSeconds, pipelineRate, pipelineMemory.peakRssMiB(), pipelineMemory.peakHeapMiB(),
        chunks, bareSeconds, bareRate, bareMemory.peakRssMiB(), bareMemory.peakHeapMiB(),
        ratio * 100, ratio >= 0.8 ? "MET" : "NOT MET");
  }
}
