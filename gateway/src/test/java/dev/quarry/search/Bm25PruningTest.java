package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.quarry.store.Database;
import dev.quarry.support.TestDatabase;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.sql.Connection;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("Full-text scoring past its posting budgets: a cut term reads its best postings, exact scores for the chunks found")
class Bm25PruningTest {
  static TestDatabase db;
  static Vertx vertx;
  static Pool pool;
  static SearchService exact;
  static SearchService pruned;
  static UUID tenant;
  static Corpus.Inserted doc;

  @BeforeAll
  static void setUp() throws Exception {
    db = TestDatabase.create();
    vertx = Vertx.vertx();
    pool = Database.pool(vertx, db.config());
    exact = new SearchService(vertx, pool, SharedEmbedder.get(), db.config());
    // 2 postings read in full, 2 per other term: "quartz" (df 2) is read in full; of "rock" (df 6)
    // only its 2 best postings (chunks 1 and 0), its share elsewhere looked up for the candidates.
    pruned = new SearchService(vertx, pool, SharedEmbedder.get(), db.config(), 2, 2);
    db.prepare(vertx, exact);
    try (Connection c = db.jdbc()) {
      Corpus corpus = new Corpus(c, SharedEmbedder.get());
      tenant = corpus.tenant("rocks");
      doc = corpus.doc(tenant, "Rocks")
          .text("rock quartz rock")   // 0
          .text("rock rock rock")     // 1
          .text("quartz vein")        // 2
          .text("rock granite")       // 3
          .text("rock basalt")        // 4
          .text("rock slate")         // 5
          .text("rock shale")         // 6
          .insert();
    }
  }

  @AfterAll
  static void tearDown() {
    if (pool != null) {
      pool.close().await();
    }
    if (vertx != null) {
      vertx.close().await();
    }
    if (db != null) {
      db.close();
    }
  }

  static Map<UUID, Double> scores(SearchService search, String query) {
    return search.rank(tenant, query, SearchMode.FULL_TEXT, 10).await().stream()
        .collect(Collectors.toMap(RankedChunk::chunkId, RankedChunk::score));
  }

  static List<UUID> order(SearchService search, String query) {
    return search.rank(tenant, query, SearchMode.FULL_TEXT, 10).await().stream()
        .map(RankedChunk::chunkId).toList();
  }

  @Test
  @DisplayName("past the budgets, the chunks found have their exact scores, a cut term's share included")
  void prunedScoresExact() {
    Map<UUID, Double> all = scores(exact, "rock quartz");
    Map<UUID, Double> some = scores(pruned, "rock quartz");
    assertThat(all).hasSize(7);
    // Both of quartz's chunks, and rock's best two: nothing else.
    assertThat(some.keySet()).containsExactlyInAnyOrder(doc.chunkAt(0), doc.chunkAt(1), doc.chunkAt(2));
    for (UUID chunk : some.keySet()) {
      assertThat(some.get(chunk)).isCloseTo(all.get(chunk), within(1e-9));
    }
    assertThat(order(pruned, "rock quartz")).isEqualTo(order(exact, "rock quartz").subList(0, 3));

    // Chunk 3 is found through granite; rock's posting in it was not read (past rock's best two),
    // yet its score holds rock's share: looked up by key.
    Map<UUID, Double> granite = scores(pruned, "rock granite");
    assertThat(granite.keySet()).containsExactlyInAnyOrder(doc.chunkAt(0), doc.chunkAt(1), doc.chunkAt(3));
    assertThat(granite.get(doc.chunkAt(3)))
        .isCloseTo(scores(exact, "rock granite").get(doc.chunkAt(3)), within(1e-9))
        .isGreaterThan(scores(exact, "granite").get(doc.chunkAt(3)));
  }

  @Test
  @DisplayName("a one-term query past the cut returns that term's best chunks in exact BM25 order")
  void oneTermTopExact() {
    List<RankedChunk> ranked = pruned.rank(tenant, "rock", SearchMode.FULL_TEXT, 10).await();
    assertThat(ranked).extracting(RankedChunk::chunkId)
        .containsExactlyElementsOf(order(exact, "rock").subList(0, 2));
    assertThat(ranked.get(0).chunkId()).isEqualTo(doc.chunkAt(1));
  }
}
