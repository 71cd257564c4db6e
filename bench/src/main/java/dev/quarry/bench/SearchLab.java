package dev.quarry.bench;

import dev.quarry.config.Config;
import dev.quarry.search.Embedder;
import dev.quarry.search.OnnxEmbedder;
import dev.quarry.search.SearchRequest;
import dev.quarry.store.Database;
import dev.quarry.tenancy.Tenants;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A workbench for search latency: keeps the Vaswani-size and the 100k synthetic corpora loaded in
 * databases of their own ({@code quarry_lab_vaswani}, {@code quarry_lab_100k}) between runs, since
 * loading 100k chunks takes minutes, then times {@code SearchService.search} in process over all
 * the bench queries. Existing databases are migrated, so a new migration is applied to them too.
 *
 * <p>{@code SearchLab [vaswani|100k] [rounds] [cached|cold|explain N...]}: with {@code cached} the
 * query vectors come from the bench's vector cache, so the figures are SQL and expansion alone;
 * with {@code cold} every query misses SearchService's cache of recent query vectors, so the model
 * runs; with neither, the measured rounds repeat the warm-up's queries (vectors cached).
 */
public final class SearchLab {
  private SearchLab() {}

  public static void main(String[] args) throws Exception {
    String which = args.length > 0 ? args[0] : "100k";
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    boolean cached = args.length > 2 && args[2].equals("cached");
    boolean cold = args.length > 2 && args[2].equals("cold");
    BenchPaths paths = BenchPaths.detect();
    OnnxEmbedder model = new OnnxEmbedder();
    TestCollection vaswani = TestCollections.vaswani(paths.retrieval());
    TestCollection cranfield = TestCollections.cranfield(paths.retrieval());
    VectorCache.Vectors vv = VectorCache.load(paths.work().resolve("embeddings"), vaswani, model);
    VectorCache.Vectors cv = VectorCache.load(paths.work().resolve("embeddings"), cranfield, model);
    List<String> queries = new ArrayList<>();
    vaswani.queries().forEach(q -> queries.add(q.text()));
    cranfield.queries().forEach(q -> queries.add(q.text()));
    List<float[]> queryVectors = new ArrayList<>(vv.queries());
    queryVectors.addAll(cv.queries());

    Config config = ensureLoaded(which, vaswani, cranfield, vv, model);
    if (args.length > 2 && args[2].equals("explain")) {
      for (int i = 3; i < args.length; i++) {
        int q = Integer.parseInt(args[i]);
        explain(config, queries.get(q), queryVectors.get(q), rounds);
      }
      System.exit(0);
    }
    Embedder embedder = model;
    if (cached) {
      CachedQueryEmbedder c = new CachedQueryEmbedder(model);
      c.remember(queries, queryVectors);
      embedder = c;
    }
    try (QuarryStack stack = new QuarryStack(config, embedder)) {
      for (String q : queries) {
        search(stack, q);
      }
      // -Dlab.ab=NAME: alternate per query between NAME=true and NAME=false (a switch of the code
      // under test), so that both variants see the same load on a shared machine.
      String ab = System.getProperty("lab.ab");
      for (int r = 0; ab != null && r < rounds; r++) {
        List<Double> a = new ArrayList<>();
        List<Double> b = new ArrayList<>();
        for (int i = 0; i < queries.size(); i++) {
          boolean first = (i + r) % 2 == 0;
          System.setProperty(ab, Boolean.toString(first));
          long start = System.nanoTime();
          search(stack, cold ? queries.get(i) + " ".repeat(r + 1) : queries.get(i));
          (first ? a : b).add((System.nanoTime() - start) / 1e6);
        }
        for (List<Double> l : List.of(a, b)) {
          Percentiles p = Percentiles.of(l.stream().mapToDouble(Double::doubleValue).toArray());
          System.out.printf(Locale.ROOT, "%s=%s round %d: p50 %.1f ms, p95 %.1f ms, mean %.1f ms%n",
              ab, l == a, r + 1, p.p50(), p.p95(), p.mean());
        }
      }
      for (int r = 0; ab == null && r < rounds; r++) {
        double[] millis = new double[queries.size()];
        for (int i = 0; i < queries.size(); i++) {
          long start = System.nanoTime();
          // "cold": a trailing space per round misses the query vector cache, so the model runs.
          search(stack, cold ? queries.get(i) + " ".repeat(r + 1) : queries.get(i));
          millis[i] = (System.nanoTime() - start) / 1e6;
        }
        Percentiles p = Percentiles.of(millis);
        System.out.printf(Locale.ROOT, "%s%s round %d: p50 %.1f ms, p95 %.1f ms, p99 %.1f ms, mean %.1f ms%n",
            which, cached ? " (cached vectors)" : cold ? " (query embedded)" : "", r + 1, p.p50(), p.p95(), p.p99(), p.mean());
      }
    }
    System.exit(0);
  }

  private static void search(QuarryStack stack, String q) throws Exception {
    stack.search().search(Tenants.DEFAULT, new SearchRequest(q, 10))
        .toCompletionStage().toCompletableFuture().get();
  }

  /**
   * EXPLAIN (ANALYZE, BUFFERS) of one of SearchSql's statements for one query ({@code
   * -Dlab.statement}, a field name: fullTextIds, the default, vectorIds, hybrid...; not
   * fusedExpanded, which takes rankings computed beforehand), parameters written in as literals (as
   * a custom plan sees them), as the default tenant; the statement is read by reflection.
   */
  private static void explain(Config config, String query, float[] vector, int runs) throws Exception {
    Class<?> sqlClass = Class.forName("dev.quarry.search.SearchSql");
    var ctor = sqlClass.getDeclaredConstructor(String.class, int.class);
    ctor.setAccessible(true);
    Object sql = ctor.newInstance(OnnxEmbedder.BGE_SMALL, 384);
    var field = sqlClass.getDeclaredField(System.getProperty("lab.statement", "fullTextIds"));
    field.setAccessible(true);
    Object statement = field.get(sql);
    var sqlText = statement.getClass().getDeclaredMethod("sql");
    var params = statement.getClass().getDeclaredMethod("params");
    sqlText.setAccessible(true);
    params.setAccessible(true);
    String text = (String) sqlText.invoke(statement);
    List<?> names = (List<?>) params.invoke(statement);
    for (int i = names.size(); i >= 1; i--) {
      String literal = switch (names.get(i - 1).toString()) {
        case "TENANT" -> "'" + Tenants.DEFAULT + "'::uuid";
        case "QUERY" -> "'" + query.replace("'", "''") + "'::text";
        case "VECTOR" -> "'" + QuarryCorpus.vectorLiteral(vector) + "'::text";
        case "SCOPE" -> "NULL::uuid[]";
        case "CANDIDATES" -> "100";
        case "POSTINGS" -> System.getProperty("lab.postings", "10000");
        case "POOL" -> "300";
        case "TERMS" -> "64";
        case "BUDGET" -> "2000";
        default -> throw new IllegalStateException(names.get(i - 1).toString());
      };
      text = text.replace("$" + i, literal);
    }
    try (Connection c = DriverManager.getConnection(config.jdbcUrl(), config.pgUser(), config.pgPassword());
        Statement s = c.createStatement()) {
      c.setAutoCommit(false);
      s.execute(Database.setTenant(Tenants.DEFAULT));
      s.execute("SET LOCAL hnsw.iterative_scan = relaxed_order");
      s.execute("SET LOCAL hnsw.ef_search = 100");
      for (String setting : System.getProperty("lab.set", "").split(";")) {
        if (!setting.isBlank()) {
          s.execute("SET LOCAL " + setting);
        }
      }
      for (int r = 0; r < runs; r++) {
        try (ResultSet rs = s.executeQuery("EXPLAIN (ANALYZE, BUFFERS) " + text)) {
          StringBuilder plan = new StringBuilder();
          while (rs.next()) {
            plan.append(rs.getString(1)).append('\n');
          }
          if (r == runs - 1) {
            System.out.println("=== " + query + "\n" + plan);
          }
        }
      }
      c.rollback();
    }
  }

  static Config ensureLoaded(String which, TestCollection vaswani, TestCollection cranfield,
      VectorCache.Vectors vv, Embedder model) throws Exception {
    Config base = Config.fromEnv(System.getenv());
    // -Dlab.db=NAME: a database loaded elsewhere, such as one LatencyBench keeps
    // (quarry_bench_latency_q100000 plus QUARRY_BENCH_DB_SUFFIX).
    String given = System.getProperty("lab.db");
    if (given != null) {
      return base.withDatabase(given);
    }
    String name = "quarry_lab_" + which;
    Config config = base.withDatabase(name);
    if (!exists(base, name)) {
      List<String> vaswaniTexts = vaswani.docs().stream().map(TestCollection.Doc::text).toList();
      List<String> ids;
      List<String> texts;
      List<float[]> vectors;
      if (which.equals("vaswani")) {
        ids = vaswani.docs().stream().map(TestCollection.Doc::id).toList();
        texts = vaswaniTexts;
        vectors = vv.docs();
      } else {
        List<String> others = new ArrayList<>(vaswaniTexts);
        cranfield.docs().forEach(d -> others.add(d.text()));
        SyntheticCorpus big = SyntheticCorpus.generate(LatencyBench.SYNTHETIC_SIZE, vaswaniTexts, vv.docs(),
            others, 42);
        ids = big.ids();
        texts = big.texts();
        vectors = big.vectors();
      }
      long t0 = System.nanoTime();
      admin(base, "CREATE DATABASE " + name + "_loading");
      Config loading = base.withDatabase(name + "_loading");
      Database.migrate(loading);
      QuarryCorpus.load(BenchDatabase.kept(loading), Tenants.DEFAULT, model.modelName(), ids, texts, vectors);
      new QuarryStack(loading, model).close();
      admin(base, "ALTER DATABASE " + name + "_loading RENAME TO " + name);
      System.out.printf(Locale.ROOT, "loaded %s (%d chunks) in %.0fs%n", name, ids.size(), (System.nanoTime() - t0) / 1e9);
    }
    Database.migrate(config);
    return config;
  }

  private static boolean exists(Config base, String name) throws SQLException {
    try (Connection c = DriverManager.getConnection(base.jdbcUrl(), base.pgUser(), base.pgPassword());
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT 1 FROM pg_database WHERE datname = '" + name + "'")) {
      return rs.next();
    }
  }

  private static void admin(Config base, String sql) throws SQLException {
    try (Connection c = DriverManager.getConnection(base.jdbcUrl(), base.pgUser(), base.pgPassword());
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }
}
