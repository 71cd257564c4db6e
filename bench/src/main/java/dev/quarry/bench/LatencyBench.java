package dev.quarry.bench;

import dev.quarry.config.Config;
import dev.quarry.config.Quota;
import dev.quarry.gateway.Gateway;
import dev.quarry.search.Embedder;
import dev.quarry.tenancy.Tenants;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * Search latency at 10k, 100k and 1M synthetic chunks, end to end: a new query's POST /v1/search
 * against a gateway started in process (query embedding, both rankings, fusion, context
 * expansion, JSON), and LangChain4j's PgVectorEmbeddingStore doing the same work (embedding the
 * query with the same model, then its HYBRID search), the two interleaved query by query so that
 * the shared machine's noise falls on both alike. Each size is loaded once into databases of its
 * own and reused by later runs while the corpus, the loader and the schema are unchanged.
 */
public final class LatencyBench {
  static final int SYNTHETIC_SIZE = 100_000;
  static final int LIMIT = 10;
  static final long SEED = 42;

  /** Bump when loading the same corpus would write other rows or indexes (a kept database is then reloaded). */
  static final int LOAD_VERSION = 1;

  /** Session memory for the index builds after a load (the server default, 64 MB, cannot hold a 1M HNSW graph). */
  static final String INDEX_MEMORY = "2GB";

  /** Sizes to measure (bench.latency.sizes, comma-separated). */
  private static final List<Integer> SIZES = Arrays.stream(
      System.getProperty("bench.latency.sizes", "10000,100000,1000000").split(","))
      .map(String::trim).map(Integer::parseInt).toList();

  /** Warm-up passes over the queries beyond the one that fills the cache (bench.latency.warmup). */
  private static final int WARM_UP_ROUNDS = Integer.getInteger("bench.latency.warmup", 8);

  /** Measured passes over the queries (bench.latency.passes). */
  private static final int PASSES = Integer.getInteger("bench.latency.passes", 2);

  /** Only load (or find loaded) the sizes' databases, measure nothing (bench.latency.loadOnly). */
  private static final boolean LOAD_ONLY = Boolean.getBoolean("bench.latency.loadOnly");

  private final BenchPaths paths;
  private final Embedder model;
  private String apiKey;

  public LatencyBench(BenchPaths paths, Embedder model) {
    this.paths = paths;
    this.model = model;
  }

  /**
   * Loads the sizes' databases ahead of a run (with -Dbench.latency.loadOnly=true), writing nothing
   * to BENCHMARKS.md: a million chunks take most of an hour on two cores.
   */
  public static void main(String[] args) throws Exception {
    new LatencyBench(BenchPaths.detect(), new dev.quarry.search.OnnxEmbedder(
        System.getenv().getOrDefault("QUARRY_EMBEDDING_MODEL", dev.quarry.search.OnnxEmbedder.DEFAULT))).run();
    System.exit(0);
  }

  public String run() throws Exception {
    TestCollection vaswani = TestCollections.vaswani(paths.retrieval());
    TestCollection cranfield = TestCollections.cranfield(paths.retrieval());
    VectorCache.Vectors vv = VectorCache.load(paths.work().resolve("embeddings"), vaswani, model);
    List<String> queries = new ArrayList<>();
    vaswani.queries().forEach(q -> queries.add(q.text()));
    cranfield.queries().forEach(q -> queries.add(q.text()));
    List<String> vaswaniTexts = vaswani.docs().stream().map(TestCollection.Doc::text).toList();
    List<String> others = new ArrayList<>(vaswaniTexts);
    cranfield.docs().forEach(d -> others.add(d.text()));

    StringBuilder md = new StringBuilder();
    md.append(String.format(Locale.ROOT, """
        %d queries (all Vaswani and Cranfield queries), one at a time, after %d warm-up passes over
        all of them (the JIT-compiled state of a serving process), then %d measured passes; limit %d.
        Quarry and LangChain4j are interleaved query by query (the order alternates), so that the
        shared machine's noise falls on both alike.

        - **Quarry**: `POST /v1/search` over HTTP to a gateway started in process
          (`dev.quarry.gateway.Gateway`, port 0, default settings), timed at the client: query
          embedding with %s, BM25 and the vector ranking side by side, each from the gateway's
          in-memory copy of the tenant's data (`search/TermIndex`, `search/VectorIndex`: built in
          the background after the first search; the measured passes start once a search ranks
          both in memory, or once no copy is being built when one does not fit the budget: each
          size says how many searches ranked in memory), fusion (`search/Fusion`) and context
          expansion, as in production. "New query" sends each query
          with trailing spaces it has not had before (same terms, same vector, but a miss in the
          gateway's cache of recent query vectors, so the model runs); "repeated query" sends it as
          the last warm-up pass did (vector cached). The targets are judged on new queries.
        - **LangChain4j**: `PgVectorEmbeddingStore` 1.11.0-beta19, HYBRID mode (text search
          config `english`; its GIN index on `to_tsvector` and its ivfflat index with lists =
          rows / 1000, default probes), timed as embedding the query with the same model plus
          `store.search`, so both sides do the same work; the two parts are also shown alone.

        Synthetic corpora: each chunk is a real Vaswani abstract plus a fragment of another real
        abstract (Vaswani or Cranfield); its vector is that Vaswani abstract's real %s vector plus
        Gaussian noise (sigma %.3f per dimension), normalised (`SyntheticCorpus`, generator
        version %d, seed %d). Loading: COPY in batches of 5,000 with the secondary indexes dropped
        and rebuilt after the load (Quarry: also chunk_terms' primary key; the BM25 postings are
        written by the migrations' own triggers), then the HNSW index (Quarry) with
        maintenance_work_mem %s for both, then VACUUM ANALYZE. A loaded database is kept and reused
        by later runs while the corpus, the loader and the schema are unchanged; its load time is
        the one measured when it was loaded.

        """, queries.size(), WARM_UP_ROUNDS + 1, PASSES, LIMIT, model.modelName(), model.modelName(),
        SyntheticCorpus.NOISE, SyntheticCorpus.GENERATOR_VERSION, SEED, INDEX_MEMORY));
    List<String> verdicts = new ArrayList<>();
    List<String> growth = new ArrayList<>();
    for (int size : SIZES) {
      Supplier<Iterator<SyntheticCorpus.Chunk>> corpus =
          () -> SyntheticCorpus.chunks(size, vaswaniTexts, vv.docs(), others, SEED);
      Result r = measure(size, corpus, queries);
      md.append(r.markdown());
      growth.add(String.format(Locale.ROOT, "| %,d | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f |", size,
          r.quarryNew().p50(), r.quarryNew().p95(), r.lc4j().p50(), r.lc4j().p95(),
          r.lc4j().p50() / r.quarryNew().p50(), r.lc4j().p95() / r.quarryNew().p95()));
      if (size == SYNTHETIC_SIZE) {
        double ratio = r.lc4j().p50() / r.quarryNew().p50();
        double ratio95 = r.lc4j().p95() / r.quarryNew().p95();
        verdicts.add(String.format(Locale.ROOT, "no slower than LangChain4j at 100k (LangChain4j p50 / Quarry"
            + " p50, new query, same work, same run) >= 1.0: %.1f / %.1f ms = %.2f: %s (at p95: %.1f / %.1f ms = %.2f)",
            r.lc4j().p50(), r.quarryNew().p50(), ratio, ratio >= 1 ? "MET" : "NOT MET",
            r.lc4j().p95(), r.quarryNew().p95(), ratio95));
        verdicts.add(String.format(Locale.ROOT, "p95 <= 50 ms at 100k (new query): %.1f ms: %s",
            r.quarryNew().p95(), r.quarryNew().p95() <= 50 ? "MET" : "NOT MET"));
      }
    }
    md.append("### How it grows (new query; ratio = LangChain4j / Quarry)\n\n")
        .append("| chunks | Quarry p50 ms | Quarry p95 ms | LangChain4j p50 ms | LangChain4j p95 ms | ratio p50 | ratio p95 |\n")
        .append("|---:|---:|---:|---:|---:|---:|---:|\n");
    growth.forEach(g -> md.append(g).append('\n'));
    md.append("\n### Targets\n\n");
    if (verdicts.isEmpty()) {
      verdicts.add("not judged: 100,000 chunks were not among the sizes measured (bench.latency.sizes)");
    }
    verdicts.forEach(v -> md.append("- ").append(v).append('\n'));
    return md.toString();
  }

  private record Result(String markdown, Percentiles quarryNew, Percentiles lc4j) {}

  private Result measure(int size, Supplier<Iterator<SyntheticCorpus.Chunk>> corpus, List<String> queries)
      throws Exception {
    String name = String.format(Locale.ROOT, "synthetic %,d chunks", size);
    System.out.println("latency: " + name);
    String fingerprint = "synthetic v" + SyntheticCorpus.GENERATOR_VERSION + " seed " + SEED + " size " + size
        + " model " + model.modelName() + " load v" + LOAD_VERSION;
    BenchDatabase quarryDb = BenchDatabase.reusable("latency_q" + size, true, fingerprint, INDEX_MEMORY);
    if (quarryDb.needsLoad()) {
      long t0 = System.nanoTime();
      QuarryCorpus.load(quarryDb, Tenants.DEFAULT, model.modelName(), corpus.get(), true, false);
      long t1 = System.nanoTime();
      // prepare() in the constructor builds the HNSW index, as a gateway start-up does.
      new QuarryStack(quarryDb.config(), model).close();
      long t2 = System.nanoTime();
      vacuum(quarryDb, "documents, items, chunks, chunk_terms, term_stats");
      long t3 = System.nanoTime();
      quarryDb.markLoaded((t3 - t0) / 1e9, String.format(Locale.ROOT,
          "COPY with the BM25 triggers and the B-tree rebuilds %.0f s, HNSW %.0f s, VACUUM %.0f s",
          (t1 - t0) / 1e9, (t2 - t1) / 1e9, (t3 - t2) / 1e9));
    }
    System.out.println("  quarry: " + quarryDb.loadRecord());
    int lists = Math.max(1, size / 1000);
    BenchDatabase lcDb = BenchDatabase.reusable("latency_l" + size, false, fingerprint + " lists " + lists,
        INDEX_MEMORY);
    LangChainPgVector store;
    if (lcDb.needsLoad()) {
      long t0 = System.nanoTime();
      store = LangChainPgVector.bulk(lcDb, corpus.get(), model.dimensions(), lists);
      long t1 = System.nanoTime();
      vacuum(lcDb, "lc4j_chunks");
      long t2 = System.nanoTime();
      lcDb.markLoaded((t2 - t0) / 1e9, String.format(Locale.ROOT,
          "COPY and the index builds %.0f s, VACUUM %.0f s", (t1 - t0) / 1e9, (t2 - t1) / 1e9));
    } else {
      store = LangChainPgVector.existing(lcDb, model.dimensions(), lists);
    }
    System.out.println("  langchain4j: " + lcDb.loadRecord());
    if (LOAD_ONLY) {
      store.close();
      Percentiles none = Percentiles.of(new double[] {0});
      return new Result("", none, none);
    }
    String quarrySizes = relationSizes(quarryDb, List.of("chunks", "chunk_terms", "term_stats", "documents", "items"));
    String lcSizes = relationSizes(lcDb, List.of("lc4j_chunks"));

    Config base = quarryDb.config().withHttpPort(0).withDataDir(paths.work().resolve("gateway-data"));
    // Measured flat out: the requests-per-minute quota is not what this benchmark is about.
    Config config = base.withTenancy(base.tenancy().withDefault(Quota.REQUESTS_PER_MINUTE,
        Quota.REQUESTS_PER_MINUTE.hardLimit()));
    apiKey = quarryDb.createKey(Tenants.DEFAULT);
    Vertx vertx = Vertx.vertx();
    double loadBefore = loadAverage();
    double[][] ms = new double[5][queries.size() * PASSES];
    try (store) {
      Gateway gateway = new Gateway(config);
      await(vertx.deployVerticle(gateway));
      WebClient client = WebClient.create(vertx);
      int port = gateway.port();
      // Warm-up: the JIT of both request paths. The first passes send each query with more trailing
      // spaces than any measured pass (new to the cache: the whole new-query path); the last sends it
      // as it is, so that the measured passes find its vector cached for the repeated query.
      for (int round = WARM_UP_ROUNDS; round >= 0; round--) {
        String suffix = round == 0 ? "" : " ".repeat(PASSES + round);
        for (String q : queries) {
          post(client, port, q + suffix);
          store.rank(q, model.embedQuery(q), LIMIT);
        }
      }
      // The copies of the tenant's postings, vectors and hit contexts are built in the background
      // after its first search; the measured passes are meant for the gateway as it serves once they
      // are there, so keep searching (one query at a time, as the warm-up did) until a search ranks
      // both sides in memory, or, when a copy does not fit the budget (QUARRY_SEARCH_MEMORY_MB), until
      // two passes in a row end with no copy being built; and say how long that took.
      long copiesWait = System.nanoTime();
      int extra = 0;
      int quiet = 0;
      while (!rankedInMemory(gateway, () -> post(client, port, queries.get(0))) && quiet < 2) {
        if (System.nanoTime() - copiesWait > 1_800_000_000_000L) {
          throw new IllegalStateException("the search copies were still being built after 30 minutes");
        }
        for (String q : queries) {
          post(client, port, q);
        }
        extra++;
        quiet = copyBuilds(gateway) == 0 ? quiet + 1 : 0;
      }
      copiesReady = String.format(Locale.ROOT, "%.0f s after the warm-up (%d more passes)",
          (System.nanoTime() - copiesWait) / 1e9, extra);
      double[] before = rankings(gateway);
      quarryHits = 0;
      lc4jHits = 0;
      for (int pass = 0; pass < PASSES; pass++) {
        String fresh = " ".repeat(pass + 1);
        for (int i = 0; i < queries.size(); i++) {
          String q = queries.get(i);
          int at = pass * queries.size() + i;
          boolean quarryFirst = (i + pass) % 2 == 0;
          if (quarryFirst) {
            ms[0][at] = timed(() -> post(client, port, q + fresh));
            countHits();
          }
          long start = System.nanoTime();
          float[] v = model.embedQuery(q);
          long embedded = System.nanoTime();
          lc4jHits += store.rank(q, v, LIMIT).size();
          long end = System.nanoTime();
          ms[2][at] = (end - start) / 1e6;
          ms[3][at] = (end - embedded) / 1e6;
          ms[4][at] = (embedded - start) / 1e6;
          if (!quarryFirst) {
            ms[0][at] = timed(() -> post(client, port, q + fresh));
            countHits();
          }
          ms[1][at] = timed(() -> post(client, port, q));
          countHits();
        }
      }
      double[] after = rankings(gateway);
      inMemory = String.format(Locale.ROOT, "full text %.0f%%, vectors %.0f%%, hit contexts %.0f%%",
          share(after[0] - before[0], after[1] - before[1]), share(after[2] - before[2], after[3] - before[3]),
          share(after[4] - before[4], after[5] - before[5]));
      client.close();
    } finally {
      await(vertx.close());
    }
    double loadAfter = loadAverage();
    Percentiles[] p = new Percentiles[5];
    for (int s = 0; s < 5; s++) {
      p[s] = Percentiles.of(ms[s]);
    }
    System.out.printf(Locale.ROOT, "  quarry new query p50 %.1f ms p95 %.1f ms; langchain4j p50 %.1f ms p95 %.1f ms;"
        + " hits per search %.1f and %.1f%n", p[0].p50(), p[0].p95(), p[2].p50(), p[2].p95(),
        quarryHits / (2.0 * ms[0].length), lc4jHits / (double) ms[0].length);
    String md = "### " + name + "\n\n" + Percentiles.header() + "\n"
        + p[0].row("Quarry POST /v1/search (HTTP, end to end, new query)") + "\n"
        + p[1].row("Quarry POST /v1/search (HTTP, end to end, repeated query: vector cached)") + "\n"
        + p[2].row("LangChain4j HYBRID: embed query + store.search") + "\n"
        + p[3].row("LangChain4j HYBRID: store.search alone") + "\n"
        + p[4].row("query embedding alone (the LangChain4j loop's model call)") + "\n\n"
        + String.format(Locale.ROOT, "LangChain4j / Quarry (new query): p50 %.2f, p95 %.2f. Hits per"
            + " search (limit %d): Quarry %.1f (new and repeated), LangChain4j %.1f. Load average (1 min) of"
            + " the shared machine: %.1f before, %.1f after (%d CPUs).%n%n",
            p[2].p50() / p[0].p50(), p[2].p95() / p[0].p95(), LIMIT, quarryHits / (2.0 * ms[0].length),
            lc4jHits / (double) ms[0].length, loadBefore, loadAfter, Runtime.getRuntime().availableProcessors())
        + "Quarry's copies (those that fit) were built " + copiesReady + "; share of the measured searches ranked from"
        + " the gateway's copies rather than the database (QUARRY_SEARCH_MEMORY_MB "
        + config.searchMemoryMb() + "): " + inMemory + ".\n\n"
        + "Load: Quarry " + quarryDb.loadRecord() + ": " + quarryDb.loadDetail() + "; LangChain4j "
        + lcDb.loadRecord() + ": " + lcDb.loadDetail() + ".\n\n"
        + "| Quarry relation | MiB |\n|---|---:|\n" + quarrySizes + "\n"
        + "| LangChain4j relation | MiB |\n|---|---:|\n" + lcSizes + "\n";
    return new Result(md, p[0], p[2]);
  }

  @FunctionalInterface
  private interface Timed {
    void run() throws Exception;
  }

  private static double timed(Timed work) throws Exception {
    long start = System.nanoTime();
    work.run();
    return (System.nanoTime() - start) / 1e6;
  }

  /**
   * What autovacuum does to a freshly loaded table soon after, done before measuring: sets the
   * visibility map, without which every index-only scan visits the heap.
   */
  private static void vacuum(BenchDatabase db, String tables) throws SQLException {
    try (Connection c = db.jdbc(); Statement s = c.createStatement()) {
      s.execute("VACUUM (ANALYZE) " + tables);
    }
  }

  /** Each table (heap with TOAST) and each of its indexes, in MiB, with what the index is. */
  private static String relationSizes(BenchDatabase db, List<String> tables) throws SQLException {
    StringBuilder out = new StringBuilder();
    try (Connection c = db.jdbc(); Statement s = c.createStatement()) {
      for (String table : tables) {
        try (ResultSet rs = s.executeQuery("SELECT pg_table_size('" + table + "')")) {
          rs.next();
          out.append(String.format(Locale.ROOT, "| %s (table, with TOAST) | %.1f |%n", table, rs.getLong(1) / 1048576.0));
        }
        try (ResultSet rs = s.executeQuery("SELECT i.relname, am.amname, pg_relation_size(i.oid)"
            + " FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_am am ON am.oid = i.relam"
            + " WHERE x.indrelid = '" + table + "'::regclass ORDER BY i.relname")) {
          while (rs.next()) {
            out.append(String.format(Locale.ROOT, "| %s (%s) | %.1f |%n", rs.getString(1), rs.getString(2),
                rs.getLong(3) / 1048576.0));
          }
        }
      }
    }
    return out.toString();
  }

  /** Hits returned in the measured passes, per system: a search that finds nothing is not fast, it is broken. */
  private long quarryHits;
  private String copiesReady = "(not measured)";
  private long lc4jHits;

  private void post(WebClient client, int port, String query) throws Exception {
    HttpResponse<Buffer> response = await(client.post(port, "127.0.0.1", "/v1/search")
        .putHeader("Authorization", "Bearer " + apiKey)
        .sendJsonObject(new JsonObject().put("query", query).put("limit", LIMIT)));
    if (response.statusCode() != 200) {
      throw new IllegalStateException("POST /v1/search answered " + response.statusCode() + ": "
          + response.bodyAsString());
    }
    last = response;
  }

  /** Where the measured searches ranked, for the report. */
  private String inMemory = "not measured";

  /** The last response, counted after its timing ends (parsing it is the client's work, not the search's). */
  private HttpResponse<Buffer> last;

  /** Whether the search {@code request} sends ranks both sides from the gateway's copies. */
  private static boolean rankedInMemory(Gateway gateway, ThrowingRunnable request) throws Exception {
    double terms = counted(gateway, "quarry_search_fulltext_rankings");
    double vectors = counted(gateway, "quarry_search_vector_rankings");
    request.run();
    return counted(gateway, "quarry_search_fulltext_rankings") > terms
        && counted(gateway, "quarry_search_vector_rankings") > vectors;
  }

  private static double counted(Gateway gateway, String name) {
    return counted(gateway, name, "memory");
  }

  private static double counted(Gateway gateway, String name, String source) {
    var counter = gateway.metrics().registry().find(name).tag("source", source).counter();
    return counter == null ? 0 : counter.count();
  }

  /** Rankings and expansions so far, in memory and in the database, of the three kinds of copy. */
  private static double[] rankings(Gateway gateway) {
    List<String> names = List.of("quarry_search_fulltext_rankings", "quarry_search_vector_rankings",
        "quarry_search_context_expansions");
    double[] counts = new double[6];
    for (int i = 0; i < 3; i++) {
      counts[2 * i] = counted(gateway, names.get(i), "memory");
      counts[2 * i + 1] = counted(gateway, names.get(i), "database");
    }
    return counts;
  }

  private static double share(double memory, double database) {
    return memory + database == 0 ? 0 : 100 * memory / (memory + database);
  }

  /** Copies being built in the gateway now (its gauge). */
  private static double copyBuilds(Gateway gateway) {
    var gauge = gateway.metrics().registry().find("quarry_search_copy_builds").gauge();
    if (gauge == null) {
      throw new IllegalStateException("the gateway has no gauge quarry_search_copy_builds");
    }
    return gauge.value();
  }

  private interface ThrowingRunnable {
    void run() throws Exception;
  }

  private void countHits() {
    quarryHits += last.bodyAsJsonObject().getJsonArray("results").size();
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
}
