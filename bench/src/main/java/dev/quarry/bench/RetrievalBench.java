package dev.quarry.bench;

import dev.quarry.search.Embedder;
import dev.quarry.search.Fusion;
import dev.quarry.search.Fusion.Scored;
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

  /**
   * One system's averages on one collection: nDCG@10 over all judged queries and over each half of
   * {@link FusionStudy#tuning}'s split, recall@100 and MRR@10 over all.
   */
  public record Scores(String system, double ndcg10, double ndcgTune, double ndcgReport, double recall100,
      double mrr10, int queries) {}

  /** One collection's scores, and the two candidate lists of each query for the fusion study. */
  record Evaluation(TestCollection collection, List<Scores> scores, FusionStudy.Collection runs) {}

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
        Plain RRF: Lucene's BM25 ranking and Quarry's vector ranking (top 100 each) fused by
        reciprocal rank, k = 60. nDCG@10 uses the grade as gain (trec_eval's linear gain); averages
        over judged queries. "tune" and "report" are the two halves of each collection's queries
        (split by the CRC-32 of the query id, even = tune): fusion settings were chosen on the tune
        halves only (see "Fusion: what was tried" below), so the report halves are the honest figures.
        MS MARCO is agentset's 5,000-passage subset (43 judged queries, so its halves are small).

        """.formatted(model.modelName()));
    List<String> verdicts = new ArrayList<>();
    // -Dbench.collections=cranfield narrows a run while iterating; the written section says which ran.
    // cranfield-long (only when named): Cranfield with every abstract inside other abstracts' text up
    // to a chunk's length (ModelBench.padded), to see how a model does on passages as long as chunks.
    List<String> names = List.of(System.getProperty("bench.collections", "vaswani,cranfield,msmarco").split(","));
    TestCollection cranfield = TestCollections.cranfield(paths.retrieval());
    List<Evaluation> done = new ArrayList<>();
    for (TestCollection c : List.of(TestCollections.vaswani(paths.retrieval()), cranfield,
        TestCollections.msmarco(paths.retrieval()), longer(cranfield))) {
      if (!names.contains(c.name())) {
        continue;
      }
      Evaluation e = evaluate(c);
      done.add(e);
      md.append(String.format(Locale.ROOT, "### %s: %d documents (%d empty left out), %d judged queries (%d tune, %d report), %d judgments%n%n",
          c.name(), c.docs().size(), c.skippedEmptyDocs(), c.judgedQueries().size(),
          c.judgedQueries().stream().filter(q -> FusionStudy.tuning(q.id())).count(),
          c.judgedQueries().stream().filter(q -> !FusionStudy.tuning(q.id())).count(), c.judgmentCount()));
      md.append("| system | nDCG@10 | nDCG@10 tune | nDCG@10 report | recall@100 | MRR@10 |\n|---|---:|---:|---:|---:|---:|\n");
      for (Scores s : e.scores()) {
        md.append(String.format(Locale.ROOT, "| %s | %.4f | %.4f | %.4f | %.4f | %.4f |%n",
            s.system(), s.ndcg10(), s.ndcgTune(), s.ndcgReport(), s.recall100(), s.mrr10()));
      }
      md.append('\n');
      verdicts.addAll(verdicts(c.name(), e.scores()));
    }
    if (done.size() > 1) {
      verdicts.addAll(meanVerdicts(done));
      List<FusionStudy.Collection> runs = done.stream().map(Evaluation::runs).toList();
      md.append("### Fusion: what was tried\n\n").append("""
          Each function fuses the same two lists Quarry's search fuses (its BM25 and vector candidates,
          100 each, with their scores), computed in memory from the runs above. Each family's
          parameter is the one with the best mean nDCG@10 over the tune halves, one value for every
          collection (weights in steps of 0.05; RRF k in 10, 20, 40, 60, 100); the report columns are
          then that setting on the other halves. A candidate missing from one list gets 0 from that
          side (z-score: the list's lowest).

          """).append(FusionStudy.markdown(runs, FusionStudy.study(runs))).append('\n');
      md.append("""
          Held out: each family's parameter chosen on the tune halves of the *other two* collections,
          then scored on the held-out one's tune half and its report half: how a setting does on a
          collection it was not tuned on, which is how Quarry is checked. Quarry's family is the one
          with the best mean held-out tune figure (no report half looked at), its weight the best on
          all three tune halves.

          """).append(FusionStudy.heldOut(runs)).append('\n');
      md.append("How flat the chosen family is: min-max convex combination by vector weight, tune halves only.\n\n");
      StringBuilder curve = new StringBuilder("| vector weight | mean tune nDCG@10 |\n|---:|---:|\n");
      for (FusionStudy.Result r : FusionStudy.curve("convex, min-max (vector weight)", runs)) {
        curve.append(String.format(Locale.ROOT, "| %.2f | %.4f |%n", r.fusion().vectorWeight(), r.meanTune()));
      }
      md.append(curve).append('\n');
    }
    md.append("### Targets (nDCG@10, report halves; all queries in brackets)\n\n");
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

  Evaluation evaluate(TestCollection c) throws Exception {
    System.out.printf("retrieval: %s (%d docs, %d judged queries)%n", c.name(), c.docs().size(),
        c.judgedQueries().size());
    VectorCache.Vectors vectors = VectorCache.load(paths.work().resolve("embeddings"), c, model);
    List<String> docIds = c.docs().stream().map(TestCollection.Doc::id).toList();
    List<String> texts = c.docs().stream().map(TestCollection.Doc::text).toList();
    List<Integer> judged = new ArrayList<>();
    for (int i = 0; i < c.queries().size(); i++) {
      Map<String, Integer> grades = c.qrels().getOrDefault(c.queries().get(i).id(), Map.of());
      if (grades.values().stream().anyMatch(g -> g > 0)) {
        judged.add(i);
      }
    }
    List<Scores> out = new ArrayList<>();
    List<List<String>> luceneRuns;
    try (LuceneBm25 lucene = new LuceneBm25(c.docs())) {
      luceneRuns = runs(lucene, c, vectors, judged);
      out.add(score(lucene.name(), luceneRuns, c, judged));
    }
    try (BenchDatabase db = BenchDatabase.fresh("lc4j_" + c.name().replace('-', '_'), false);
        LangChainPgVector lc4j = new LangChainPgVector(db, docIds, texts, vectors.docs(), 0)) {
      out.add(score(lc4j.name(), runs(lc4j, c, vectors, judged), c, judged));
    }
    CachedQueryEmbedder embedder = new CachedQueryEmbedder(model);
    embedder.remember(c.queries().stream().map(TestCollection.Query::text).toList(), vectors.queries());
    List<FusionStudy.Runs> study = new ArrayList<>();
    try (BenchDatabase db = BenchDatabase.fresh("quarry_" + c.name().replace('-', '_'), true)) {
      QuarryCorpus corpus = QuarryCorpus.load(db, Tenants.DEFAULT, model.modelName(), docIds, texts, vectors.docs());
      try (QuarryStack quarry = new QuarryStack(db.config(), embedder)) {
        List<List<Scored<String>>> fullText = new ArrayList<>();
        List<List<Scored<String>>> vector = new ArrayList<>();
        for (int i : judged) {
          fullText.add(quarry.scored(corpus, c.queries().get(i).text(), SearchMode.FULL_TEXT, DEPTH));
          vector.add(quarry.scored(corpus, c.queries().get(i).text(), SearchMode.VECTOR, DEPTH));
        }
        List<List<String>> plainRrf = new ArrayList<>();
        for (int j = 0; j < judged.size(); j++) {
          List<Scored<String>> lucene = new ArrayList<>();
          for (String id : luceneRuns.get(j)) {
            lucene.add(new Scored<>(id, 0));
          }
          plainRrf.add(Fusion.PLAIN_RRF.fuse(lucene, vector.get(j), DEPTH, DEPTH).stream().map(Scored::id).toList());
          TestCollection.Query q = c.queries().get(judged.get(j));
          study.add(new FusionStudy.Runs(q.id(), fullText.get(j), vector.get(j), c.qrels().get(q.id())));
        }
        out.add(score("plain RRF (Lucene BM25 + Quarry vectors, k = 60)", plainRrf, c, judged));
        for (SearchMode mode : SearchMode.values()) {
          QuarryRetriever r = new QuarryRetriever(quarry.search(), corpus, Tenants.DEFAULT, mode);
          out.add(score(r.name(), runs(r, c, vectors, judged), c, judged));
        }
      }
    }
    FusionStudy.Collection runs = new FusionStudy.Collection(c.name(), study);
    FusionStudy.save(paths.work().resolve("fusion-runs"), runs);
    return new Evaluation(c, out, runs);
  }

  private static List<List<String>> runs(Retriever r, TestCollection c, VectorCache.Vectors vectors,
      List<Integer> judged) throws Exception {
    List<List<String>> out = new ArrayList<>(judged.size());
    for (int i : judged) {
      out.add(r.rank(c.queries().get(i).text(), vectors.queries().get(i), DEPTH));
    }
    return out;
  }

  static Scores score(String system, List<List<String>> rankings, TestCollection c, List<Integer> judged) {
    double[] ndcg = new double[3];
    int[] n = new int[3];
    double recall = 0;
    double mrr = 0;
    for (int j = 0; j < judged.size(); j++) {
      TestCollection.Query q = c.queries().get(judged.get(j));
      Map<String, Integer> grades = c.qrels().get(q.id());
      List<String> ranking = rankings.get(j);
      double v = Metrics.ndcg(ranking, grades, 10);
      int half = FusionStudy.tuning(q.id()) ? 1 : 2;
      ndcg[0] += v;
      ndcg[half] += v;
      n[0]++;
      n[half]++;
      recall += Metrics.recall(ranking, grades, DEPTH);
      mrr += Metrics.reciprocalRank(ranking, grades, 10);
    }
    Scores s = new Scores(system, ndcg[0] / n[0], ndcg[1] / Math.max(1, n[1]), ndcg[2] / Math.max(1, n[2]),
        recall / n[0], mrr / n[0], n[0]);
    System.out.printf(Locale.ROOT, "  %-60s nDCG@10 %.4f (tune %.4f, report %.4f)  recall@100 %.4f  MRR@10 %.4f%n",
        s.system(), s.ndcg10(), s.ndcgTune(), s.ndcgReport(), s.recall100(), s.mrr10());
    return s;
  }

  static List<String> verdicts(String collection, List<Scores> scores) {
    Scores hybrid = find(scores, "Quarry hybrid");
    List<String> out = new ArrayList<>();
    out.add(check(collection + ": Quarry hybrid >= Quarry vector only", hybrid, find(scores, "Quarry vector"), false));
    out.add(check(collection + ": Quarry hybrid >= Quarry full-text only", hybrid, find(scores, "Quarry full-text"), false));
    out.add(check(collection + ": Quarry hybrid >= Lucene BM25", hybrid, find(scores, "Lucene"), false));
    out.add(check(collection + ": Quarry hybrid > LangChain4j HYBRID", hybrid, find(scores, "LangChain4j"), true));
    out.add(check(collection + ": Quarry hybrid >= plain RRF", hybrid, find(scores, "plain RRF"), false));
    return out;
  }

  /** Mean nDCG@10 over the collections: Quarry hybrid against the best baseline's mean + 0.02. */
  static List<String> meanVerdicts(List<Evaluation> done) {
    List<String> baselines = List.of("Lucene", "LangChain4j", "plain RRF", "Quarry vector", "Quarry full-text");
    String best = null;
    double bestReport = -1;
    double bestAll = -1;
    for (String b : baselines) {
      double report = done.stream().mapToDouble(e -> find(e.scores(), b).ndcgReport()).average().orElse(0);
      if (report > bestReport) {
        best = b;
        bestReport = report;
        bestAll = done.stream().mapToDouble(e -> find(e.scores(), b).ndcg10()).average().orElse(0);
      }
    }
    double report = done.stream().mapToDouble(e -> find(e.scores(), "Quarry hybrid").ndcgReport()).average().orElse(0);
    double all = done.stream().mapToDouble(e -> find(e.scores(), "Quarry hybrid").ndcg10()).average().orElse(0);
    return List.of(String.format(Locale.ROOT,
        "mean over %d collections: Quarry hybrid >= best baseline's mean (%s) + 0.02: %.4f vs %.4f + 0.02 [%.4f vs %.4f + 0.02]: %s",
        done.size(), best, report, bestReport, all, bestAll, report >= bestReport + 0.02 ? "MET" : "NOT MET"));
  }

  private static String check(String what, Scores ours, Scores theirs, boolean strict) {
    boolean met = strict ? ours.ndcgReport() > theirs.ndcgReport() : ours.ndcgReport() >= theirs.ndcgReport();
    return String.format(Locale.ROOT, "%s: %.4f vs %.4f [%.4f vs %.4f]: %s", what, ours.ndcgReport(),
        theirs.ndcgReport(), ours.ndcg10(), theirs.ndcg10(), met ? "MET" : "NOT MET");
  }

  private static Scores find(List<Scores> scores, String prefix) {
    return scores.stream().filter(s -> s.system().startsWith(prefix)).findFirst()
        .orElseThrow(() -> new IllegalStateException("no scores for " + prefix));
  }
}
