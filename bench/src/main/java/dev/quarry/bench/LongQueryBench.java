package dev.quarry.bench;

import dev.quarry.search.Embedder;
import dev.quarry.search.Fusion;
import dev.quarry.search.Fusion.Scored;
import dev.quarry.search.SearchMode;
import dev.quarry.search.SearchRequest;
import dev.quarry.tenancy.Tenants;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Long queries: a pasted paragraph, or a model's verbose question. Each judged query of a collection
 * is lengthened to about {@link #LENGTHS} words by appending the text of its own relevant documents,
 * best graded first; the documents used leave the judgments and the ranking, so what is measured is
 * whether the long query still finds the other relevant documents (the short query is scored on the
 * same reduced judgments, beside it). Latency is {@code SearchService.search} (what {@code POST
 * /v1/search} calls: the model on the query, both rankings, fusion, context expansion), each query
 * new to the query-vector cache, short and long interleaved query by query so both see the same load
 * on the shared machine.
 */
final class LongQueryBench {
  static final int[] LENGTHS = {50, 150, 300};
  private static final int DEPTH = RetrievalBench.DEPTH;

  /** The fusion before issue 16's part A, for the "before" column. */
  static final Fusion BEFORE = FusionStudy.BEFORE;

  private final BenchPaths paths;
  private final Embedder model;

  private static int maxQueryChars() {
    return dev.quarry.config.Config.fromEnv(System.getenv()).maxQueryChars();
  }

  LongQueryBench(BenchPaths paths, Embedder model) {
    this.paths = paths;
    this.model = model;
  }

  /** One query at one length: its text, the judgments left, the documents its text came from. */
  record Lengthened(String queryId, String shortText, String text, int words, Map<String, Integer> grades,
      Set<String> used) {}

  /**
   * The query followed by its relevant documents' words, best graded first (ties by id), until
   * {@code words} words; null when the documents run out first or none would be left to find.
   */
  static Lengthened lengthen(TestCollection.Query q, Map<String, Integer> grades, Map<String, String> texts,
      int words) {
    List<String> relevant = grades.entrySet().stream().filter(e -> e.getValue() > 0)
        .sorted(Map.Entry.<String, Integer>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()))
        .map(Map.Entry::getKey).toList();
    List<String> out = new ArrayList<>(List.of(q.text().split("\\s+")));
    Set<String> used = new java.util.LinkedHashSet<>();
    for (String d : relevant) {
      if (out.size() >= words || used.size() + 1 >= relevant.size()) {
        break;
      }
      String text = texts.get(d);
      if (text == null) {
        continue;
      }
      used.add(d);
      for (String w : text.split("\\s+")) {
        if (out.size() >= words) {
          break;
        }
        out.add(w);
      }
    }
    if (out.size() < words) {
      return null;
    }
    Map<String, Integer> left = new LinkedHashMap<>(grades);
    used.forEach(left::remove);
    return new Lengthened(q.id(), q.text(), String.join(" ", out), out.size(), left, used);
  }

  String run() throws Exception {
    StringBuilder md = new StringBuilder(String.format(Locale.ROOT, """
        Each judged query is lengthened to %s words by appending the text of its own relevant
        documents, best graded first, as a user pasting a passage or a model writing a verbose
        question would; the documents used are left out of the judgments and of the ranking, so the
        long query is scored on finding the *other* relevant documents, and the short query beside it
        on the same reduced judgments (queries with too little relevant text for a length are left
        out of it). nDCG@10 of Quarry's hybrid (`SearchService.rank`), its two halves, and the
        fusion before this change (%s) on the same two candidate lists. Latency:
        `SearchService.search` in process (what `POST /v1/search` calls: %s on the query, both
        rankings, fusion, context expansion), limit 10, every query new to the query-vector cache,
        short and long interleaved query by query (one warm-up pass first), so the short rows are
        the baseline measured in the same run. "BM25 statement" is `rank` in full-text mode alone;
        "model" is one embedding of the query alone. The guards: the model embeds at most the first
        and last %d tokens' words of a query (`OnnxEmbedder.QUERY_TOKENS` = %d), BM25 scores its
        %d rarest distinct terms (`SearchService.QUERY_TERMS`), and `QUARRY_MAX_QUERY_CHARS` is %,d
        (queries above it are refused with a 400 and counted, not measured).

        """, java.util.Arrays.toString(LENGTHS).replaceAll("[\\[\\]]", ""), BEFORE, model.modelName(),
        dev.quarry.search.OnnxEmbedder.QUERY_TOKENS / 2, dev.quarry.search.OnnxEmbedder.QUERY_TOKENS,
        dev.quarry.search.SearchService.QUERY_TERMS, maxQueryChars()));
    for (TestCollection c : List.of(TestCollections.cranfield(paths.retrieval()),
        TestCollections.msmarco(paths.retrieval()), TestCollections.vaswani(paths.retrieval()))) {
      md.append(collection(c));
    }
    return md.toString();
  }

  private String collection(TestCollection c) throws Exception {
    System.out.printf("long queries: %s%n", c.name());
    VectorCache.Vectors vectors = VectorCache.load(paths.work().resolve("embeddings"), c, model);
    Map<String, String> texts = new HashMap<>();
    c.docs().forEach(d -> texts.put(d.id(), d.text()));
    CachedQueryEmbedder embedder = new CachedQueryEmbedder(model);
    embedder.remember(c.queries().stream().map(TestCollection.Query::text).toList(), vectors.queries());
    StringBuilder md = new StringBuilder();
    try (BenchDatabase db = BenchDatabase.fresh("long_" + c.name(), true)) {
      QuarryCorpus corpus = QuarryCorpus.load(db, Tenants.DEFAULT, model.modelName(),
          c.docs().stream().map(TestCollection.Doc::id).toList(),
          c.docs().stream().map(TestCollection.Doc::text).toList(), vectors.docs());
      try (QuarryStack quarry = new QuarryStack(db.config(), embedder)) {
        // Warm-up: the JIT of the search path, with the short queries (their vectors cached).
        for (TestCollection.Query q : c.judgedQueries()) {
          search(quarry, q.text());
        }
        md.append(String.format(Locale.ROOT, "### %s%n%n", c.name()));
        md.append("| query | queries | words (mean) | chars (max) | hybrid nDCG@10 | before | vectors | BM25 |"
            + " p50 ms | p95 ms | BM25 statement p50 ms | model p50 ms |\n"
            + "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (int words : LENGTHS) {
          List<Lengthened> queries = new ArrayList<>();
          int refused = 0;
          for (TestCollection.Query q : c.judgedQueries()) {
            Lengthened l = lengthen(q, c.qrels().get(q.id()), texts, words);
            if (l != null && l.text().length() > db.config().maxQueryChars()) {
              refused++; // a 400 naming QUARRY_MAX_QUERY_CHARS: counted, not measured
            } else if (l != null) {
              queries.add(l);
            }
          }
          if (queries.isEmpty()) {
            continue;
          }
          Row shortRow = new Row(queries.size());
          Row longRow = new Row(queries.size());
          for (int i = 0; i < queries.size(); i++) {
            Lengthened l = queries.get(i);
            // A trailing space: the same terms and vector, but new to SearchService's cache.
            shortRow.add(i, quarry, corpus, l, l.shortText() + " ".repeat(words / 50));
            longRow.add(i, quarry, corpus, l, l.text());
          }
          md.append(shortRow.markdown("short (the query alone), " + words + "-word set", queries, false));
          md.append(longRow.markdown(words + " words" + (refused > 0 ? " (" + refused
              + " more refused: over QUARRY_MAX_QUERY_CHARS)" : ""), queries, true));
          System.out.printf(Locale.ROOT, "  %d words: %d queries, hybrid %.4f (short %.4f), p50 %.1f ms (short %.1f)%n",
              words, queries.size(), longRow.mean(longRow.hybrid), shortRow.mean(shortRow.hybrid),
              Percentiles.of(longRow.millis).p50(), Percentiles.of(shortRow.millis).p50());
        }
        md.append('\n');
      }
    }
    return md.toString();
  }

  /** One row's measurements, one slot per query. */
  private final class Row {
    final double[] hybrid;
    final double[] before;
    final double[] vector;
    final double[] bm25;
    final double[] millis;
    final double[] bm25Millis;
    final double[] modelMillis;
    int maxChars;

    Row(int n) {
      hybrid = new double[n];
      before = new double[n];
      vector = new double[n];
      bm25 = new double[n];
      millis = new double[n];
      bm25Millis = new double[n];
      modelMillis = new double[n];
    }

    void add(int i, QuarryStack quarry, QuarryCorpus corpus, Lengthened l, String text) throws Exception {
      maxChars = Math.max(maxChars, text.length());
      long t0 = System.nanoTime();
      search(quarry, text);
      millis[i] = (System.nanoTime() - t0) / 1e6;
      // The vector is now in the query-vector cache: the rankings below do not run the model again.
      long t1 = System.nanoTime();
      List<Scored<String>> text100 = quarry.scored(corpus, text, SearchMode.FULL_TEXT, DEPTH);
      bm25Millis[i] = (System.nanoTime() - t1) / 1e6;
      List<Scored<String>> vec100 = quarry.scored(corpus, text, SearchMode.VECTOR, DEPTH);
      int depth = 10 + l.used().size();
      hybrid[i] = ndcg(quarry.scored(corpus, text, SearchMode.HYBRID, depth), l);
      before[i] = ndcg(BEFORE.fuse(text100, vec100, depth, DEPTH), l);
      vector[i] = ndcg(vec100, l);
      bm25[i] = ndcg(text100, l);
      long t2 = System.nanoTime();
      model.embedQuery(text + " ");
      modelMillis[i] = (System.nanoTime() - t2) / 1e6;
    }

    double mean(double[] v) {
      return java.util.Arrays.stream(v).average().orElse(0);
    }

    String markdown(String label, List<Lengthened> queries, boolean lengthened) {
      double words = lengthened ? queries.stream().mapToInt(Lengthened::words).average().orElse(0)
          : queries.stream().mapToInt(q -> q.shortText().split("\\s+").length).average().orElse(0);
      return String.format(Locale.ROOT, "| %s | %d | %.0f | %d | %.4f | %.4f | %.4f | %.4f | %.1f | %.1f | %.1f | %.1f |%n",
          label, queries.size(), words, maxChars, mean(hybrid), mean(before), mean(vector), mean(bm25),
          Percentiles.of(millis).p50(), Percentiles.of(millis).p95(), Percentiles.of(bm25Millis).p50(),
          Percentiles.of(modelMillis).p50());
    }
  }

  /** nDCG@10 of a ranking with the documents the query's text came from taken out. */
  private static double ndcg(List<Scored<String>> ranking, Lengthened l) {
    List<String> ids = ranking.stream().map(Scored::id).filter(id -> !l.used().contains(id)).toList();
    return Metrics.ndcg(ids, l.grades(), 10);
  }

  private static void search(QuarryStack quarry, String text) throws Exception {
    quarry.search().search(Tenants.DEFAULT, new SearchRequest(text, 10))
        .toCompletionStage().toCompletableFuture().get();
  }
}
