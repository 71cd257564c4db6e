package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.quarry.support.TestDatabase;
import dev.quarry.support.TestStack;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("Full-text ranking is BM25 (k1 = 1.2, b = 0.75)")
class Bm25ScoringTest {
  @AutoClose
  static final TestStack stack = TestStack.start();
  static final TestDatabase db = stack.db();
  static final Vertx vertx = stack.vertx();
  static final Pool pool = stack.pool();
  static SearchService search;
  static UUID fruitTenant;
  static UUID lengthTenant;
  static Corpus.Inserted fruit;
  static Corpus.Inserted lengths;

  @BeforeAll
  static void setUp() throws Exception {
    search = new SearchService(vertx, pool, SharedEmbedder.get(), db.config());
    db.prepare(vertx, search);
    try (Connection c = db.jdbc()) {
      Corpus corpus = new Corpus(c, SharedEmbedder.get());
      fruitTenant = corpus.tenant("fruit");
      lengthTenant = corpus.tenant("lengths");
      // Lexemes after the english configuration: appl, banana, cherri, date.
      fruit = corpus.doc(fruitTenant, "Fruit")
          .text("apple banana")          // 0: length 2
          .text("apple apple cherry")    // 1: length 3
          .text("banana cherry date")    // 2: length 3
          .insert();
      lengths = corpus.doc(lengthTenant, "Lengths")
          .text("granite")
          .text("granite basalt marble slate shale gneiss schist quartzite")
          .text("limestone chalk")
          .insert();
    }
  }

  static Map<UUID, Double> scores(UUID tenant, String query) {
    return search.rank(tenant, query, SearchMode.FULL_TEXT, 10).await().stream()
        .collect(Collectors.toMap(RankedChunk::chunkId, RankedChunk::score));
  }

  @Test
  @DisplayName("scores match the hand-computed BM25 values on a three-chunk corpus")
  void handComputed() {
    // N = 3, total length 8, avgdl = 8/3.
    // "apple": df = 2, idf = ln(1 + (3 - 2 + 0.5) / (2 + 0.5)) = ln(1.6)
    //   chunk 0: tf 1, dl 2: 1 * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 2 / (8/3))) = 2.2 / 1.975
    //   chunk 1: tf 2, dl 3: 2 * 2.2 / (2 + 1.2 * (0.25 + 0.75 * 3 / (8/3))) = 4.4 / 3.3125
    // "date": df = 1, idf = ln(1 + 2.5 / 1.5) = ln(8/3)
    //   chunk 2: tf 1, dl 3: 2.2 / (1 + 1.3125) = 2.2 / 2.3125
    Map<UUID, Double> s = scores(fruitTenant, "apple date");
    assertThat(s).hasSize(3);
    assertThat(s.get(fruit.chunkAt(0))).isCloseTo(Math.log(1.6) * 2.2 / 1.975, within(1e-9));
    assertThat(s.get(fruit.chunkAt(1))).isCloseTo(Math.log(1.6) * 4.4 / 3.3125, within(1e-9));
    assertThat(s.get(fruit.chunkAt(2))).isCloseTo(Math.log(8.0 / 3) * 2.2 / 2.3125, within(1e-9));
  }

  @Test
  @DisplayName("a rare term outweighs a common one, which ts_rank cannot do")
  void rareTermWins() {
    List<RankedChunk> ranked = search.rank(fruitTenant, "apple date", SearchMode.FULL_TEXT, 3)
        .await();
    assertThat(ranked.get(0).chunkId()).isEqualTo(fruit.chunkAt(2));
  }

  @Test
  @DisplayName("a term in a short chunk counts more than the same term in a long one")
  void lengthNormalised() {
    List<RankedChunk> ranked = search.rank(lengthTenant, "granite", SearchMode.FULL_TEXT, 3)
        .await();
    assertThat(ranked).extracting(RankedChunk::chunkId)
        .containsExactly(lengths.chunkAt(0), lengths.chunkAt(1));
    assertThat(ranked.get(0).score()).isGreaterThan(ranked.get(1).score());
  }

  @Test
  @DisplayName("corpus statistics follow inserts and deletes, per tenant")
  void statsMaintained() throws Exception {
    try (Connection c = db.jdbc(); Statement s = c.createStatement()) {
      assertThat(stats(s, fruitTenant)).containsExactly(3L, 8L);
      assertThat(stats(s, lengthTenant)).containsExactly(3L, 11L);
      UUID extra;
      Corpus corpus = new Corpus(c, SharedEmbedder.get());
      extra = corpus.doc(fruitTenant, "More fruit").text("elderberry fig grape").insert()
          .documentId();
      assertThat(stats(s, fruitTenant)).containsExactly(4L, 11L);
      s.executeUpdate("DELETE FROM documents WHERE id = '" + extra + "'");
      assertThat(stats(s, fruitTenant)).containsExactly(3L, 8L);
      try (ResultSet rs = s.executeQuery(
          "SELECT count(*) FROM chunk_terms WHERE document_id = '" + extra + "'")) {
        rs.next();
        assertThat(rs.getLong(1)).isZero();
      }
    }
  }

  @Test
  @DisplayName("a query of stop words alone matches nothing in full text")
  void stopWords() {
    assertThat(search.rank(fruitTenant, "the and of", SearchMode.FULL_TEXT, 3).await()).isEmpty();
  }

  private static List<Long> stats(Statement s, UUID tenant) throws Exception {
    try (ResultSet rs = s.executeQuery("SELECT chunk_count, total_tokens FROM corpus_stats"
        + " WHERE tenant_id = '" + tenant + "'")) {
      assertThat(rs.next()).isTrue();
      return List.of(rs.getLong(1), rs.getLong(2));
    }
  }
}
