package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.quarry.support.TestDatabase;
import dev.quarry.support.TestStack;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.sql.Connection;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("Full-text scoring past the posting budget: common terms only add to the rare terms' chunks")
class Bm25PruningTest {
  @AutoClose
  static final TestStack stack = TestStack.start();
  static final TestDatabase db = stack.db();
  static final Vertx vertx = stack.vertx();
  static final Pool pool = stack.pool();
  static SearchService exact;
  static SearchService pruned;
  static UUID tenant;
  static Corpus.Inserted doc;

  @BeforeAll
  static void setUp() throws Exception {
    exact = new SearchService(vertx, pool, SharedEmbedder.get(), db.config());
    // Budget 2: "quartz" (df 2) is read in full; "rock" (df 6) is only looked up for its chunks.
    pruned = new SearchService(vertx, pool, SharedEmbedder.get(), db.config(), 2);
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

  static Map<UUID, Double> scores(SearchService search, String query) {
    return search.rank(tenant, query, SearchMode.FULL_TEXT, 10).await().stream()
        .collect(Collectors.toMap(RankedChunk::chunkId, RankedChunk::score));
  }

  @Test
  @DisplayName("within the budget every matching chunk is scored; past it, the rare term's chunks keep exact scores")
  void prunedKeepsExactScores() {
    Map<UUID, Double> all = scores(exact, "rock quartz");
    Map<UUID, Double> some = scores(pruned, "rock quartz");
    assertThat(all).hasSize(7);
    assertThat(some.keySet()).containsExactlyInAnyOrder(doc.chunkAt(0), doc.chunkAt(2));
    // Chunk 0 holds both terms: the common term's share is added, so the score is the exact one.
    assertThat(some.get(doc.chunkAt(0))).isCloseTo(all.get(doc.chunkAt(0)), within(1e-9));
    assertThat(some.get(doc.chunkAt(2))).isCloseTo(all.get(doc.chunkAt(2)), within(1e-9));
    assertThat(all.get(doc.chunkAt(0))).isGreaterThan(all.get(doc.chunkAt(1)));
  }

  @Test
  @DisplayName("a query of one common term alone still reads that term in full")
  void rarestTermAlwaysRead() {
    List<RankedChunk> ranked = pruned.rank(tenant, "rock", SearchMode.FULL_TEXT, 10).await();
    assertThat(ranked).hasSize(6);
    assertThat(ranked.get(0).chunkId()).isEqualTo(doc.chunkAt(1));
  }
}
