package dev.quarry.bench;

import dev.quarry.search.Embedder;
import dev.quarry.search.SearchMode;
import dev.quarry.tenancy.Tenants;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Retrieval quality: every system ranks the same collection with the same vectors; nDCG@10,
 * recall@100 and MRR@10 averaged over the queries that have judgments.
 */
public final class RetrievalBench {
  static final int DEPTH = 100;

  /** One system's averages on one collection. */
  public record Scores(String system, double ndcg10, double recall100, double mrr10, int queries, double msPerQuery) {}

  private final BenchPaths paths;
  private final Embedder model;

  public RetrievalBench(BenchPaths paths, Embedder model) {
    this.paths = paths;
    this.model = model;
  }

  public String run() throws Exception {
    StringBuilder md = new StringBuilder();
    md.append("""
        Collections from `shared/data/retrieval`. Every system ranks with the same vectors
        (%s through `OnnxEmbedder`, each corpus embedded once and cached under
        `bench/target/bench-work/embeddings`). Quarry: one document = one chunk, loaded into a fresh
        database with the migrated schema, ranked by `SearchService.rank` (no context expansion).
        LangChain4j: `PgVectorEmbeddingStore` 1.11.0-beta19 in its HYBRID search mode (vector +
        PostgreSQL full-text fused by RRF), text search configuration `english`, exact vector scan.
        Lucene 10.3.2: `EnglishAnalyzer`, default `BM25Similarity`, query = OR of the analysed terms.
        nDCG@10 uses the grade as gain (trec_eval's linear gain); averages over judged queries.

        """.formatted(model.modelName()));
    List<String> verdicts = new ArrayList<>();
    // -Dbench.collections=cranfield narrows a run while iterating; the written section says which ran.
    // cranfield-long (only when named): Cranfield with every abstract inside other abstracts' text up
    // to a chunk's length (ModelBench.padded), to see how a model does on passages as long as chunks.
    List<String> names = List.of(System.getProperty("bench.collections", "vaswani,cranfield").split(","));
    TestCollection cranfield = TestCollections.cranfield(paths.retrieval());
    for (TestCollection c : List.of(TestCollections.vaswani(paths.retrieval()), cranfield, longer(cranfield))) {
      if (!names.contains(c.name())) {
        continue;
      }
      List<Scores> scores = evaluate(c);
      md.append(String.format(Locale.ROOT, "### %s: %d documents (%d empty left out), %d judged queries, %d judgments%n%n",
          c.name(), c.docs().size(), c.skippedEmptyDocs(), c.judgedQueries().size(), c.judgmentCount()));
      md.append("| system | nDCG@10 | recall@100 | MRR@10 |\n|---|---:|---:|---:|\n");
      for (Scores s : scores) {
        md.append(String.format(Locale.ROOT, "| %s | %.4f | %.4f | %.4f |%n",
            s.system(), s.ndcg10(), s.recall100(), s.mrr10()));
      }
      md.append('\n');
      verdicts.addAll(verdicts(c.name(), scores));
    }
    md.append("### Targets (nDCG@10)\n\n");
    for (String v : verdicts) {
      md.append("- ").append(v).append('\n');
    }
    return md.toString();
  }

  private static TestCollection longer(TestCollection c) {
    List<String> padded = ModelBench.padded(c.docs().stream().map(TestCollection.Doc::text).toList(),
        dev.quarry.ingest.Chunker.MAX_CHARS);
    List<TestCollection.Doc> docs = new ArrayList<>();
    for (int i = 0; i < padded.size(); i++) {
      docs.add(new TestCollection.Doc(c.docs().get(i).id(), padded.get(i)));
    }
    return new TestCollection(c.name() + "-long", docs, c.queries(), c.qrels(), c.skippedEmptyDocs());
  }

  List<Scores> evaluate(TestCollection c) throws Exception {
    System.out.printf("retrieval: %s (%d docs, %d judged queries)%n", c.name(), c.docs().size(),
        c.judgedQueries().size());
    VectorCache.Vectors vectors = VectorCache.load(paths.work().resolve("embeddings"), c, model);
    List<String> docIds = c.docs().stream().map(TestCollection.Doc::id).toList();
    List<String> texts = c.docs().stream().map(TestCollection.Doc::text).toList();
    List<Scores> out = new ArrayList<>();

    try (LuceneBm25 lucene = new LuceneBm25(c.docs())) {
      out.add(score(lucene, c, vectors));
    }
    try (BenchDatabase db = BenchDatabase.fresh("lc4j_" + c.name().replace('-', '_'), false);
        LangChainPgVector lc4j = new LangChainPgVector(db, docIds, texts, vectors.docs(), 0)) {
      out.add(score(lc4j, c, vectors));
    }
    CachedQueryEmbedder embedder = new CachedQueryEmbedder(model);
    embedder.remember(c.queries().stream().map(TestCollection.Query::text).toList(), vectors.queries());
    try (BenchDatabase db = BenchDatabase.fresh("quarry_" + c.name().replace('-', '_'), true)) {
      QuarryCorpus corpus = QuarryCorpus.load(db, Tenants.DEFAULT, model.modelName(), docIds, texts, vectors.docs());
      try (QuarryStack quarry = new QuarryStack(db.config(), embedder)) {
        for (SearchMode mode : SearchMode.values()) {
          out.add(score(new QuarryRetriever(quarry.search(), corpus, Tenants.DEFAULT, mode), c, vectors));
        }
      }
    }
    return out;
  }

  static Scores score(Retriever r, TestCollection c, VectorCache.Vectors vectors) throws Exception {
    double ndcg = 0;
    double recall = 0;
    double mrr = 0;
    int n = 0;
    long nanos = 0;
    for (int i = 0; i < c.queries().size(); i++) {
      TestCollection.Query q = c.queries().get(i);
      Map<String, Integer> grades = c.qrels().getOrDefault(q.id(), Map.of());
      if (grades.values().stream().noneMatch(g -> g > 0)) {
        continue;
      }
      long start = System.nanoTime();
      List<String> ranking = r.rank(q.text(), vectors.queries().get(i), DEPTH);
      nanos += System.nanoTime() - start;
      ndcg += Metrics.ndcg(ranking, grades, 10);
      recall += Metrics.recall(ranking, grades, DEPTH);
      mrr += Metrics.reciprocalRank(ranking, grades, 10);
      n++;
    }
    Scores s = new Scores(r.name(), ndcg / n, recall / n, mrr / n, n, nanos / 1e6 / n);
    System.out.printf(Locale.ROOT, "  %-60s nDCG@10 %.4f  recall@100 %.4f  MRR@10 %.4f%n",
        s.system(), s.ndcg10(), s.recall100(), s.mrr10());
    return s;
  }

  static List<String> verdicts(String collection, List<Scores> scores) {
    Scores lucene = find(scores, "Lucene");
    Scores lc4j = find(scores, "LangChain4j");
    Scores fullText = find(scores, "Quarry full-text");
    Scores vector = find(scores, "Quarry vector");
    Scores hybrid = find(scores, "Quarry hybrid");
    List<String> out = new ArrayList<>();
    out.add(check(collection + ": Quarry hybrid > Lucene BM25", hybrid.ndcg10(), lucene.ndcg10()));
    out.add(check(collection + ": Quarry hybrid > LangChain4j", hybrid.ndcg10(), lc4j.ndcg10()));
    double bestHalf = Math.max(fullText.ndcg10(), vector.ndcg10());
    out.add(String.format(Locale.ROOT, "%s: Quarry hybrid >= the better of its halves: %.4f vs %.4f: %s",
        collection, hybrid.ndcg10(), bestHalf, hybrid.ndcg10() >= bestHalf ? "MET" : "NOT MET"));
    return out;
  }

  private static String check(String what, double ours, double theirs) {
    return String.format(Locale.ROOT, "%s: %.4f vs %.4f: %s", what, ours, theirs, ours > theirs ? "MET" : "NOT MET");
  }

  private static Scores find(List<Scores> scores, String prefix) {
    return scores.stream().filter(s -> s.system().startsWith(prefix)).findFirst()
        .orElseThrow(() -> new IllegalStateException("no scores for " + prefix));
  }
}
