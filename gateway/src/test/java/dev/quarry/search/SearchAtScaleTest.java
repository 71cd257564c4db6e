package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.store.Database;
import dev.quarry.support.SharedData;
import dev.quarry.support.TestDatabase;
import dev.quarry.support.TestStack;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Search over the 11,429 Vaswani abstracts (../shared/data/retrieval): one chunk per abstract, in
 * documents of 100 abstracts. Embeddings are random unit vectors, since embedding the corpus with
 * ONNX would take minutes; that is enough for the latency and the plan, and full-text quality is
 * measured against the real judgments.
 */
@DisplayName("Search at ~11k chunks: index use and full-text quality")
class SearchAtScaleTest {
  static final int PER_DOCUMENT = 100;

  @AutoClose
  static final TestStack stack = TestStack.start();
  static final TestDatabase db = stack.db();
  static final Vertx vertx = stack.vertx();
  static final Pool pool = stack.pool();
  static SearchService search;
  static UUID tenant;
  static final Map<UUID, String> docnoOfChunk = new HashMap<>();
  static final List<String[]> queries = new ArrayList<>(); // {qid, text}
  static final Map<String, Set<String>> qrels = new HashMap<>();

  @BeforeAll
  static void setUp() throws Exception {
    Embedder embedder = SharedEmbedder.get();
    search = new SearchService(vertx, pool, embedder, db.config());
    var dir = SharedData.path("retrieval/vaswani_npl");
    List<String[]> docs = new ArrayList<>();
    Matcher m = Pattern.compile("<DOCNO>(\\d+)</DOCNO>\\s*(.*?)</DOC>", Pattern.DOTALL)
        .matcher(Files.readString(dir.resolve("corpus/doc-text.trec")));
    while (m.find()) {
      docs.add(new String[] {m.group(1), m.group(2).strip().replaceAll("\\s+", " ")});
    }
    Matcher q = Pattern.compile("<num>(\\d+)</num><title>\\s*(.*?)\\s*</title>", Pattern.DOTALL)
        .matcher(Files.readString(dir.resolve("query-text.trec")));
    while (q.find()) {
      queries.add(new String[] {q.group(1), q.group(2).replaceAll("\\s+", " ")});
    }
    for (String line : Files.readAllLines(dir.resolve("qrels"))) {
      String[] f = line.trim().split("\\s+");
      if (f.length == 4 && !f[3].equals("0")) {
        qrels.computeIfAbsent(f[0], k -> new HashSet<>()).add(f[2]);
      }
    }
    long t0 = System.nanoTime();
    try (Connection c = db.jdbc()) {
      c.setAutoCommit(false);
      tenant = new Corpus(c, embedder).tenant("vaswani");
      Corpus.bulk(c, tenant, docs, PER_DOCUMENT, "Vaswani abstracts", embedder.modelName(),
          embedder.dimensions(), docnoOfChunk);
      c.commit();
      try (Statement s = c.createStatement()) {
        // For the ts_rank baseline only: what a plain full-text setup would index.
        s.execute("ALTER TABLE chunks ADD COLUMN tsv tsvector"
            + " GENERATED ALWAYS AS (to_tsvector('english', content)) STORED");
        s.execute("CREATE INDEX chunks_tsv ON chunks USING gin (tsv)");
        s.execute("ANALYZE");
      }
      c.commit();
    }
    long t1 = System.nanoTime();
    // After the load, as a migration of an existing corpus would: one bulk HNSW build is far
    // cheaper than inserting into the graph row by row.
    db.prepare(vertx, search);
    System.out.printf("[search-bench] loaded %d chunks (with BM25 triggers) in %d ms;"
        + " HNSW build %d ms%n", docs.size(), (t1 - t0) / 1_000_000,
        (System.nanoTime() - t1) / 1_000_000);
  }

  @Test
  @DisplayName("the vector side is an HNSW index scan, and it returns enough rows for the tenant")
  void usesHnsw() throws Exception {
    SearchSql sql = new SearchSql(SharedEmbedder.get().modelName(),
        SharedEmbedder.get().dimensions());
    float[] v = SharedEmbedder.get().embedQuery("microwave dielectric");
    String text = sql.vector.sql();
    for (int i = 0; i < sql.vector.params().size(); i++) {
      String value = switch (sql.vector.params().get(i)) {
        case TENANT -> "'" + tenant + "'::uuid";
        case VECTOR -> "'" + Corpus.vectorText(v) + "'";
        case SCOPE -> "NULL";
        case CANDIDATES -> "100";
        default -> throw new IllegalStateException();
      };
      text = text.replace("$" + (i + 1), value);
    }
    StringBuilder plan = new StringBuilder();
    // As the gateway plans it: its role, in a transaction of the tenant (row-level security adds
    // its own tenant condition, which must not put the planner off the index).
    try (Connection c = db.appJdbc(); Statement s = c.createStatement()) {
      c.setAutoCommit(false);
      s.execute(dev.quarry.store.Database.setTenant(tenant));
      try (ResultSet rs = s.executeQuery("EXPLAIN " + text)) {
        while (rs.next()) {
          plan.append(rs.getString(1)).append('\n');
        }
      }
      c.rollback();
    }
    assertThat(plan.toString()).contains(SearchSql.indexName(SharedEmbedder.get().modelName(),
        SharedEmbedder.get().dimensions()));
    assertThat(search.rank(tenant, "microwave dielectric", SearchMode.VECTOR, 100).await())
        .hasSize(100);
  }

  @Test
  @DisplayName("a scoped search returns the best hits within the scope, not a filtered global top-k")
  void scopeIsAppliedBeforeRanking() throws Exception {
    String query = "electron";
    Set<UUID> unscopedDocs = new HashSet<>();
    for (RankedChunk c : search.rank(tenant, query, SearchMode.HYBRID, 100).await()) {
      unscopedDocs.add(c.documentId());
    }
    // A document with abstracts about the query that none of the global top 100 comes from, so a
    // filter applied after ranking would find nothing in it.
    UUID outside = null;
    try (Connection c = db.jdbc(); PreparedStatement s = c.prepareStatement("""
        SELECT DISTINCT document_id FROM chunk_terms
        WHERE tenant_id = ? AND term = 'electron' ORDER BY document_id""")) {
      s.setObject(1, tenant);
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next() && outside == null) {
          UUID doc = rs.getObject(1, UUID.class);
          if (!unscopedDocs.contains(doc)) {
            outside = doc;
          }
        }
      }
    }
    assertThat(outside).as("a matching document outside the global top 100").isNotNull();
    List<SearchHit> hits = search.search(tenant, new SearchRequest(query, 5, Set.of(outside)))
        .await();
    assertThat(hits).isNotEmpty().extracting(SearchHit::documentId).containsOnly(outside);
    // Vectors are random here, so only full text can put a chunk first: the term must be in it.
    assertThat(hits.get(0).content().toLowerCase()).contains("electron");
  }

  @Test
  @DisplayName("BM25 full text beats ts_rank on the Vaswani judgments (MRR@10, printed)")
  void fullTextQuality() throws Exception {
    double bm25 = 0;
    double tsRank = 0;
    int judged = 0;
    try (Connection c = db.jdbc()) {
      for (String[] q : queries) {
        Set<String> relevant = qrels.get(q[0]);
        if (relevant == null) {
          continue;
        }
        judged++;
        List<UUID> ranked = search.rank(tenant, q[1], SearchMode.FULL_TEXT, 10).await().stream()
            .map(RankedChunk::chunkId).toList();
        bm25 += reciprocalRank(ranked, relevant);
        // plainto_tsquery ANDs the terms; ts_rank's usual use. OR them to give it a fair chance.
        String orQuery = String.join(" | ", q[1].toLowerCase().split("\\W+"));
        List<UUID> tsRanked = new ArrayList<>();
        try (PreparedStatement or = c.prepareStatement("""
            SELECT id FROM chunks, to_tsquery('english', ?) q
            WHERE tenant_id = ? AND tsv @@ q
            ORDER BY ts_rank(tsv, q) DESC LIMIT 10""")) {
          or.setString(1, orQuery.replaceAll("^\\s*\\|\\s*|\\s*\\|\\s*$", ""));
          or.setObject(2, tenant);
          try (ResultSet rs = or.executeQuery()) {
            while (rs.next()) {
              tsRanked.add(rs.getObject(1, UUID.class));
            }
          }
        }
        tsRank += reciprocalRank(tsRanked, relevant);
      }
    }
    bm25 /= judged;
    tsRank /= judged;
    System.out.printf("[search-bench] Vaswani full text, %d judged queries: MRR@10 BM25 %.3f,"
        + " ts_rank %.3f%n", judged, bm25, tsRank);
    assertThat(bm25).isGreaterThan(tsRank);
  }

  private static double reciprocalRank(List<UUID> ranked, Set<String> relevant) {
    for (int i = 0; i < ranked.size(); i++) {
      if (relevant.contains(docnoOfChunk.get(ranked.get(i)))) {
        return 1.0 / (i + 1);
      }
    }
    return 0;
  }
}
