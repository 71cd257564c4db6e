package dev.quarry.bench;

import dev.quarry.config.Config;
import dev.quarry.gateway.Gateway;
import dev.quarry.search.Embedder;
import dev.quarry.config.Quota;
import dev.quarry.tenancy.Tenants;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Search latency, end to end: POST /v1/search against a gateway started in process (query
 * embedding, SQL, context expansion, JSON), one request at a time, after a warm-up pass; and the
 * same queries against PgVectorEmbeddingStore's HYBRID search, timed with the query embedding
 * included so both sides do the same work.
 */
public final class LatencyBench {
  static final int SYNTHETIC_SIZE = 100_000;
  static final int LIMIT = 10;

  private final BenchPaths paths;
  private final Embedder model;

  public LatencyBench(BenchPaths paths, Embedder model) {
    this.paths = paths;
    this.model = model;
  }

  public String run() throws Exception {
    TestCollection vaswani = TestCollections.vaswani(paths.retrieval());
    TestCollection cranfield = TestCollections.cranfield(paths.retrieval());
    VectorCache.Vectors vv = VectorCache.load(paths.work().resolve("embeddings"), vaswani, model);
    List<String> queries = new ArrayList<>();
    vaswani.queries().forEach(q -> queries.add(q.text()));
    cranfield.queries().forEach(q -> queries.add(q.text()));

    List<String> vaswaniTexts = vaswani.docs().stream().map(TestCollection.Doc::text).toList();
    List<String> vaswaniIds = vaswani.docs().stream().map(TestCollection.Doc::id).toList();
    SyntheticCorpus big = SyntheticCorpus.generate(SYNTHETIC_SIZE, vaswaniTexts, vv.docs(),
        concat(vaswaniTexts, cranfield.docs().stream().map(TestCollection.Doc::text).toList()), 42);

    StringBuilder md = new StringBuilder();
    md.append(String.format(Locale.ROOT, """
        %d queries (all Vaswani and Cranfield queries), one at a time, each measured once after %d
        warm-up passes over all of them (the JIT-compiled state of a serving process; until
        2026-11-30 one pass, which left much of the request path interpreted); limit %d. Quarry:
        `POST /v1/search` over HTTP to a gateway started in process (`dev.quarry.gateway.Gateway`,
        port 0), timed at the client: query embedding with %s, the SQL and context expansion included. The gateway ranks by
        BM25 on one database connection while the model embeds the query, runs the vector search on
        another as soon as the vector exists, then fusion and expansion with both. It keeps the
        vectors of recent queries; "query embedded" sends each query with a trailing space (same
        terms, same vector, but a cache miss), "repeated query" sends it as in the last warm-up pass.
        The targets are judged on "query embedded". The database is vacuumed after loading. LangChain4j:
        `PgVectorEmbeddingStore.search` in HYBRID mode (text search config `english`, ivfflat index
        with lists = rows/1000, rebuilt after loading, default probes), timed as embedding the query
        with the same model plus the store's search, so both sides do the same work.

        Synthetic %,d-chunk corpus: each chunk is a real Vaswani abstract plus a fragment of another
        real abstract (Vaswani or Cranfield); its vector is that Vaswani abstract's real
        %s vector plus Gaussian noise (sigma %.3f per dimension), normalised. The
        model was not run on the 100k chunks (too slow on this machine).

        """, queries.size(), WARM_UP_ROUNDS + 1, LIMIT, model.modelName(), SYNTHETIC_SIZE, model.modelName(),
        SyntheticCorpus.NOISE));
    List<String> verdicts = new ArrayList<>();
    for (Corpus corpus : List.of(new Corpus("Vaswani (" + vaswaniIds.size() + " chunks)", vaswaniIds, vaswaniTexts, vv.docs()),
        new Corpus(String.format(Locale.ROOT, "synthetic %,d chunks", SYNTHETIC_SIZE), big.ids(), big.texts(), big.vectors()))) {
      System.out.println("latency: " + corpus.name());
      double loadBefore = loadAverage();
      Percentiles[] quarryRuns = quarryHttp(corpus, queries);
      Percentiles quarry = quarryRuns[1];
      double loadBetween = loadAverage();
      Percentiles[] lc4j = langChain(corpus, queries);
      double loadAfter = loadAverage();
      md.append("### ").append(corpus.name()).append("\n\n").append(Percentiles.header()).append('\n')
          .append(quarry.row("Quarry POST /v1/search (HTTP, end to end, query embedded)")).append('\n')
          .append(quarryRuns[0].row("Quarry POST /v1/search (HTTP, end to end, repeated query: vector cached)")).append('\n')
          .append(lc4j[0].row("LangChain4j HYBRID: embed query + store.search")).append('\n')
          .append(lc4j[1].row("LangChain4j HYBRID: store.search alone")).append('\n')
          .append(lc4j[2].row("query embedding alone (the LangChain4j loop's model call)")).append("\n\n")
          .append(String.format(Locale.ROOT, "Load average (1 min) of the shared machine: %.1f before"
              + " the Quarry passes, %.1f before LangChain4j's, %.1f after (%d CPUs).%n%n", loadBefore,
              loadBetween, loadAfter, Runtime.getRuntime().availableProcessors()));
      if (corpus.ids().size() == SYNTHETIC_SIZE) {
        verdicts.add(String.format(Locale.ROOT, "p50 <= 15 ms at 100k: %.1f ms: %s", quarry.p50(), quarry.p50() <= 15 ? "MET" : "NOT MET"));
        verdicts.add(String.format(Locale.ROOT, "p95 <= 50 ms at 100k: %.1f ms: %s", quarry.p95(), quarry.p95() <= 50 ? "MET" : "NOT MET"));
        double speedup = lc4j[0].p50() / quarry.p50();
        verdicts.add(String.format(Locale.ROOT, ">= 2x faster than PgVectorEmbeddingStore at 100k (p50, same work): %.2fx: %s",
            speedup, speedup >= 2 ? "MET" : "NOT MET"));
        // Both sides run the same model on the query, and a vector search cannot start before the
        // vector exists: Quarry's end-to-end time is at least the embedding's.
        double embed = lc4j[2].p50();
        double store = lc4j[1].p50();
        double needed = (embed + store) / 2;
        verdicts.add(String.format(Locale.ROOT, "the arithmetic of the 2x target: with the same model"
            + " on both sides, LangChain4j takes E + S = %.1f + %.1f ms (p50 embedding, p50 store"
            + " search), so 2x needs Quarry <= (E + S) / 2 = %.1f ms; but Quarry needs the vector"
            + " too, so Quarry >= E = %.1f ms. 2x is %s while E > S (here %.1f > %.1f ms): it needs"
            + " the model to take less time than the store's whole search.",
            embed, store, needed, embed, embed > store ? "out of reach" : "possible", embed, store));
      }
    }
    md.append("### Targets\n\n");
    verdicts.forEach(v -> md.append("- ").append(v).append('\n'));
    return md.toString();
  }

  /** Warm-up passes over the queries beyond the one that fills the cache (bench.latency.warmup). */
  private static final int WARM_UP_ROUNDS = Integer.getInteger("bench.latency.warmup", 8);

  private record Corpus(String name, List<String> ids, List<String> texts, List<float[]> vectors) {}

  /** [0]: query vector cached (a repeated query); [1]: query embedded (a new query). */
  private Percentiles[] quarryHttp(Corpus corpus, List<String> queries) throws Exception {
    try (BenchDatabase db = BenchDatabase.fresh("latency_quarry", true)) {
      long t0 = System.nanoTime();
      QuarryCorpus.load(db, Tenants.DEFAULT, model.modelName(), corpus.ids(), corpus.texts(), corpus.vectors());
      try (QuarryStack stack = new QuarryStack(db.config(), model)) {
        // prepare() in the constructor builds the HNSW index; the gateway then finds it in place.
      }
      vacuum(db);
      System.out.printf("  quarry: loaded and indexed in %.1fs%n", (System.nanoTime() - t0) / 1e9);
      Config base = db.config().withHttpPort(0).withDataDir(paths.work().resolve("gateway-data"));
      // Measured flat out: the requests-per-minute quota is not what this benchmark is about.
      Config config = base.withTenancy(base.tenancy().withDefault(Quota.REQUESTS_PER_MINUTE,
          Quota.REQUESTS_PER_MINUTE.hardLimit()));
      apiKey = db.createKey(Tenants.DEFAULT);
      Vertx vertx = Vertx.vertx();
      try {
        Gateway gateway = new Gateway(config);
        await(vertx.deployVerticle(gateway));
        WebClient client = WebClient.create(vertx);
        // Warm-up: the JIT of the request path. A serving gateway runs it compiled; one pass over the
        // queries (318 requests) leaves much of it interpreted or C1-compiled. The first passes send
        // each query with two or more trailing spaces (new to the cache: the whole new-query path);
        // the last sends it as it is, so the first measured pass finds every vector cached.
        for (int round = WARM_UP_ROUNDS; round >= 0; round--) {
          String suffix = round == 0 ? "" : " ".repeat(round + 1);
          for (String q : queries) {
            post(client, gateway.port(), q + suffix);
          }
        }
        // The warm-up pass leaves every query's vector in the gateway's cache of recent queries, so
        // the first measured pass shows a repeated query. The second sends each query with a
        // trailing space: the same terms and the same vector (the tokenizer drops it), but a cache
        // miss, so the model runs as it does for a new query.
        Percentiles[] p = new Percentiles[2];
        for (int pass = 0; pass < 2; pass++) {
          double[] millis = new double[queries.size()];
          for (int i = 0; i < queries.size(); i++) {
            String q = pass == 0 ? queries.get(i) : queries.get(i) + " ";
            long start = System.nanoTime();
            post(client, gateway.port(), q);
            millis[i] = (System.nanoTime() - start) / 1e6;
          }
          p[pass] = Percentiles.of(millis);
        }
        client.close();
        System.out.printf(Locale.ROOT, "  quarry http: p50 %.1f ms, p95 %.1f ms (query embedded: p50 %.1f ms, p95 %.1f ms)%n",
            p[0].p50(), p[0].p95(), p[1].p50(), p[1].p95());
        return p;
      } finally {
        await(vertx.close());
      }
    }
  }

  /**
   * What autovacuum does to a freshly loaded table soon after, done before measuring: sets the
   * visibility map, without which every index-only scan of chunk_terms visits the heap.
   */
  private static void vacuum(BenchDatabase db) throws java.sql.SQLException {
    try (java.sql.Connection c = db.jdbc(); java.sql.Statement s = c.createStatement()) {
      s.execute("VACUUM (ANALYZE) documents, items, chunks, chunk_terms, term_stats");
    }
  }

  private String apiKey;

  private void post(WebClient client, int port, String query) throws Exception {
    HttpResponse<Buffer> response = await(client.post(port, "127.0.0.1", "/v1/search")
        .putHeader("Authorization", "Bearer " + apiKey)
        .sendJsonObject(new JsonObject().put("query", query).put("limit", LIMIT)));
    if (response.statusCode() != 200) {
      throw new IllegalStateException("POST /v1/search answered " + response.statusCode() + ": "
          + response.bodyAsString());
    }
  }

  /** [0]: embedding + search; [1]: the store's search alone; [2]: the embedding alone. */
  private Percentiles[] langChain(Corpus corpus, List<String> queries) throws Exception {
    try (BenchDatabase db = BenchDatabase.fresh("latency_lc4j", false)) {
      long t0 = System.nanoTime();
      int lists = Math.max(1, corpus.ids().size() / 1000);
      try (LangChainPgVector store = new LangChainPgVector(db, corpus.ids(), corpus.texts(), corpus.vectors(), lists)) {
        System.out.printf("  langchain4j: loaded and indexed in %.1fs%n", (System.nanoTime() - t0) / 1e9);
        // The same number of warm-up passes as Quarry's side gets.
        for (int round = 0; round <= WARM_UP_ROUNDS; round++) {
          for (String q : queries) {
            store.rank(q, model.embedQuery(q), LIMIT);
          }
        }
        double[] total = new double[queries.size()];
        double[] searchOnly = new double[queries.size()];
        double[] embedOnly = new double[queries.size()];
        for (int i = 0; i < queries.size(); i++) {
          long start = System.nanoTime();
          float[] v = model.embedQuery(queries.get(i));
          long embedded = System.nanoTime();
          store.rank(queries.get(i), v, LIMIT);
          long end = System.nanoTime();
          total[i] = (end - start) / 1e6;
          searchOnly[i] = (end - embedded) / 1e6;
          embedOnly[i] = (embedded - start) / 1e6;
        }
        Percentiles[] p = {Percentiles.of(total), Percentiles.of(searchOnly), Percentiles.of(embedOnly)};
        System.out.printf(Locale.ROOT, "  langchain4j: p50 %.1f ms, p95 %.1f ms (search alone p50 %.1f ms)%n",
            p[0].p50(), p[0].p95(), p[1].p50());
        return p;
      }
    }
  }

  /** The 1-minute load average, or -1 where /proc/loadavg is missing: the machine is shared. */
  private static double loadAverage() {
    try {
      return Double.parseDouble(java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg"))
          .split(" ")[0]);
    } catch (java.io.IOException | RuntimeException e) {
      return -1;
    }
  }

  private static <T> T await(io.vertx.core.Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get();
  }

  private static List<String> concat(List<String> a, List<String> b) {
    List<String> out = new ArrayList<>(a);
    out.addAll(b);
    return out;
  }
}
