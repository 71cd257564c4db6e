package dev.quarry.bench;

import dev.quarry.ingest.IngestRequest;
import dev.quarry.ingest.IngestResult;
import dev.quarry.ingest.IngestService;
import dev.quarry.ingest.StageTimes;
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

  private static List<String> chunkTexts(BenchDatabase db, UUID documentId) throws Exception {
    List<String> texts = new ArrayList<>();
    try (Connection c = db.jdbc(); PreparedStatement s = c.prepareStatement(
        "SELECT content FROM chunks WHERE document_id = ? ORDER BY ordinal")) {
      s.setObject(1, documentId);
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          texts.add(rs.getString(1));
        }
      }
    }
    return texts;
  }

  /** Chunks bulk-loaded per trigger variant; -Dbench.ingest.bulk overrides. */
  static final int BULK = Integer.getInteger("bench.ingest.bulk", 10_000);

  /**
   * Seconds to COPY {@code texts} into a fresh database through {@link QuarryCorpus#load}, with the
   * migrated triggers, or with V2's row-level chunk_terms trigger put back in place of V5's.
   */
  private static double bulkLoad(List<String> texts, List<float[]> vectors, boolean rowLevelTerms) throws Exception {
    try (BenchDatabase db = BenchDatabase.fresh("bulk", true)) {
      if (rowLevelTerms) {
        try (Connection c = db.jdbc(); java.sql.Statement s = c.createStatement()) {
          s.execute("DROP TRIGGER chunks_terms_insert ON chunks");
          s.execute("CREATE TRIGGER chunks_terms AFTER INSERT ON chunks"
              + " FOR EACH ROW EXECUTE FUNCTION chunks_index_terms()");
        }
      }
      List<String> ids = new ArrayList<>(texts.size());
      for (int i = 0; i < texts.size(); i++) {
        ids.add("bulk-" + i);
      }
      long t0 = System.nanoTime();
      QuarryCorpus.load(db, Tenants.DEFAULT, "bulk", ids, texts, vectors);
      return (System.nanoTime() - t0) / 1e9;
    }
  }

  private String bulkSection(TestCollection cranfield) throws Exception {
    List<String> texts = new ArrayList<>(BULK);
    List<float[]> vectors = new ArrayList<>(BULK);
    SplittableRandom random = new SplittableRandom(11);
    for (int i = 0; i < BULK; i++) {
      texts.add(cranfield.docs().get(i % cranfield.docs().size()).text() + " (copy " + i + ")");
      float[] v = new float[model.dimensions()];
      for (int d = 0; d < v.length; d++) {
        v[d] = (float) random.nextGaussian();
      }
      vectors.add(v);
    }
    double rowLevel = bulkLoad(texts, vectors, true);
    double statementLevel = bulkLoad(texts, vectors, false);
    System.out.printf(Locale.ROOT, "  bulk load of %d chunks: row-level terms %.1fs, statement-level %.1fs%n",
        BULK, rowLevel, statementLevel);
    return String.format(Locale.ROOT, """
        ### Bulk load

        %,d chunks (Cranfield abstracts, random vectors) loaded by `QuarryCorpus.load` (COPY in batches
        of 5,000, chunk indexes rebuilt after) into a fresh database, once with V2's row-level
        chunk_terms trigger put back, once with V5's statement-level trigger. Both fill chunk_terms,
        chunks.token_count and corpus_stats identically.

        | chunk_terms trigger | seconds | chunks/s |
        |---|---:|---:|
        | row-level (V2) | %.1f | %.0f |
        | statement-level (V5) | %.1f | %.0f |
        """, BULK, rowLevel, BULK / rowLevel, statementLevel, BULK / statementLevel);
  }

  public String run() throws Exception {
    TestCollection cranfield = TestCollections.cranfield(paths.retrieval());
    List<String> documents = generate(cranfield, DOCS, 7);
    long bytes = documents.stream().mapToLong(d -> d.getBytes(StandardCharsets.UTF_8).length).sum();
    // Warm the model on realistic batch shapes before either side is timed.
    model.embedPassages(cranfield.docs().subList(0, 8).stream().map(TestCollection.Doc::text).toList());

    int chunks = 0;
    long totalChars = 0;
    long pipelineNanos = 0;
    long bareNanos = 0;
    MemorySampler pipelineMemory;
    MemorySampler bareMemory;
    Map<StageTimes.Stage, Double> stages;
    Map<StageTimes.Stage, Double> warmUpStages;
    try (BenchDatabase db = BenchDatabase.fresh("ingest", true)) {
      Vertx vertx = Vertx.vertx();
      Pool pool = dev.quarry.store.Database.pool(vertx, db.config());
      try {
        IngestService ingest = new IngestService(vertx, pool, model,
            new DocumentsFs(vertx, pool, paths.work().resolve("ingest-documents")), db.config());
        System.out.printf("ingest: %d generated Markdown documents, %,d bytes%n", documents.size(), bytes);
        // One untimed ingest warms the converter, the chunker and the SQL paths; its chunks are not counted.
        ingest.ingest(Tenants.DEFAULT, new IngestRequest("warm-up.md", "bench/warm-up.md", null,
                "text/markdown", generate(cranfield, 1, 99).get(0).getBytes(StandardCharsets.UTF_8)))
            .toCompletionStage().toCompletableFuture().get();
        Map<StageTimes.Stage, Double> warmUpMillis = ingest.stageTimes().millis();
        // The two sides alternate per document (pipeline ingests it, then the bare model embeds its
        // chunks), so a change in the machine's load during the run hits both sides alike.
        pipelineMemory = new MemorySampler();
        bareMemory = new MemorySampler();
        for (int i = 0; i < documents.size(); i++) {
          long t0 = System.nanoTime();
          IngestResult r = ingest.ingest(Tenants.DEFAULT, new IngestRequest("report-" + i + ".md",
                  "bench/report-" + i + ".md", null, "text/markdown", documents.get(i).getBytes(StandardCharsets.UTF_8)))
              .toCompletionStage().toCompletableFuture().get();
          pipelineNanos += System.nanoTime() - t0;
          chunks += r.chunkCount();
          List<String> texts = chunkTexts(db, r.documentId());
          if (texts.size() != r.chunkCount()) {
            throw new IllegalStateException("the pipeline reported " + r.chunkCount() + " chunks but stored " + texts.size());
          }
          totalChars += texts.stream().mapToLong(String::length).sum();
          long t1 = System.nanoTime();
          for (int j = 0; j < texts.size(); j += EMBED_BATCH) {
            model.embedPassages(texts.subList(j, Math.min(texts.size(), j + EMBED_BATCH)));
          }
          bareNanos += System.nanoTime() - t1;
        }
        pipelineMemory.close();
        bareMemory.close();
        stages = ingest.stageTimes().millis();
        warmUpStages = warmUpMillis;
      } finally {
        pool.close().toCompletionStage().toCompletableFuture().get();
        vertx.close().toCompletionStage().toCompletableFuture().get();
      }
    }
    double pipelineSeconds = pipelineNanos / 1e9;
    double bareSeconds = bareNanos / 1e9;
    double pipelineRate = chunks / pipelineSeconds;
    double bareRate = chunks / bareSeconds;
    double ratio = pipelineRate / bareRate;
    System.out.printf(Locale.ROOT, "  pipeline %.1f chunks/s, bare model %.1f chunks/s (%.0f%%)%n",
        pipelineRate, bareRate, ratio * 100);
    StringBuilder breakdown = new StringBuilder("| stage | ms | ms per document |\n|---|---:|---:|\n");
    double stageSum = 0;
    for (Map.Entry<StageTimes.Stage, Double> e : stages.entrySet()) {
      double ms = e.getValue() - warmUpStages.get(e.getKey());
      if (e.getKey() != StageTimes.Stage.ENCODE_ROWS && e.getKey() != StageTimes.Stage.INSERT_ITEMS
          && e.getKey() != StageTimes.Stage.INSERT_CHUNKS) {
        stageSum += ms; // these three are part of the transaction's time
      }
      breakdown.append(String.format(Locale.ROOT, "| %s | %.0f | %.1f |%n",
          e.getKey().name().toLowerCase(Locale.ROOT), ms, ms / documents.size()));
    }
    breakdown.append(String.format(Locale.ROOT, "| rest (hash, look-ups, hand-offs between threads) | %.0f | %.1f |%n",
        pipelineNanos / 1e6 - stageSum, (pipelineNanos / 1e6 - stageSum) / documents.size()));
    return String.format(Locale.ROOT, """
        %d generated Markdown documents (%,d bytes; sections of real Cranfield abstracts), ingested one
        after another through `IngestService` into a fresh database: %d chunks, %,d characters of
        chunk text. After each document, the bare model (`OnnxEmbedder.embedPassages`, the same
        instance) embeds exactly that document's stored chunks in batches of 32 as the pipeline does:
        the two sides alternate document by document, so changes in the machine's load hit both alike.
        The model is warmed up first on a batch of real abstracts and one untimed warm-up document is
        ingested first. Memory: peak RSS and peak JVM heap in use, sampled every 20 ms over the
        alternating run (the same figure for both sides; JVM max heap %d MiB).

        The documents go in one at a time, not two at a time as the CLI uploads them. Until
        2026-11-30 the benchmark timed every pipeline document first and then every bare-model batch:
        on this shared machine the two phases then ran under different load, and the same code
        measured 68%% in one run and 102%% in the next.

        | phase | chunks | seconds | chunks/s | peak RSS MiB | peak heap MiB |
        |---|---:|---:|---:|---:|---:|
        | pipeline (convert, chunk, embed, write) | %d | %.1f | %.2f | %.0f | %.0f |
        | bare model (embedPassages) | %d | %.1f | %.2f | %.0f | %.0f |

        Where the pipeline's time went (wall time per stage, summed over the documents; `embed` is
        the model inside the pipeline, `transaction` includes `encode_rows`, `insert_items` and `insert_chunks`,
        `sync` writes the document's `/documents` directory):

        %s
        ### Target

        - pipeline >= 80%% of bare model throughput: %.0f%%: %s

        %s""", documents.size(), bytes, chunks, totalChars, Runtime.getRuntime().maxMemory() / (1024 * 1024),
        chunks, pipelineSeconds, pipelineRate, pipelineMemory.peakRssMiB(), pipelineMemory.peakHeapMiB(),
        chunks, bareSeconds, bareRate, bareMemory.peakRssMiB(), bareMemory.peakHeapMiB(),
        breakdown, ratio * 100, ratio >= 0.8 ? "MET" : "NOT MET", bulkSection(cranfield));
  }
}
