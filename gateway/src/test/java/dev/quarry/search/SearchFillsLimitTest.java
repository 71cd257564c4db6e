package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.support.TestDatabase;
import dev.quarry.support.TestStack;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.sql.Connection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A search asks for a few more hits than its limit, since hits whose contexts overlap or share a
 * page merge into one result. When the best hits all sit on one page, those few are not enough:
 * the next hits in the fused order fill in, so a limit of ten still gives ten results while the
 * document has ten places that match.
 */
@DisplayName("Search fills its limit when the best hits merge into one result")
class SearchFillsLimitTest {
  @AutoClose
  static final TestStack stack = TestStack.start();
  static final TestDatabase db = stack.db();
  static final Vertx vertx = stack.vertx();
  static final Pool pool = stack.pool();
  static SearchService search;
  static UUID tenant;
  static UUID document;

  @BeforeAll
  static void setUp() throws Exception {
    // A budget that holds one item and not its neighbours: each hit's context is its own item.
    search = new SearchService(vertx, pool, SharedEmbedder.get(), ContextExpansionTest.withBudget(db.config(), 200));
    db.prepare(vertx, search);
    String[] topics = {"tariffs", "glaciers", "violins", "bridges", "orchards", "comets", "ledgers",
        "harbours", "looms", "kilns", "canals", "sonnets", "quarries", "beacons", "mills", "vineyards",
        "ferries", "lanterns", "granaries", "organs", "chimneys", "arches", "reservoirs", "foundries", "bells"};
    try (Connection c = db.jdbc()) {
      Corpus corpus = new Corpus(c, SharedEmbedder.get());
      tenant = corpus.tenant("one-page");
      Corpus.Doc doc = corpus.doc(tenant, "Saffron").page(1);
      for (int i = 0; i < 12; i++) {
        doc.text("Saffron crocus stigma harvest: the saffron crocus stigma is picked by hand at dawn, "
            + "dried over embers, and sold by the gram; note " + i + " on the saffron crocus stigma harvest.");
      }
      for (int i = 0; i < topics.length; i++) {
        doc.page(i + 2).text("A short remark on " + topics[i] + " in the old town, with one mention of saffron "
            + "among the goods that passed through its market in the autumn of year " + (1800 + i) + ".");
      }
      document = doc.insert().documentId();
    }
  }

  @Test
  @DisplayName("twelve best hits on page 1 become one result, and the next pages fill the other nine places")
  void fillsTheLimit() {
    List<SearchHit> hits = search.search(tenant, new SearchRequest("saffron crocus stigma harvest", 10)).await();
    assertThat(hits).hasSize(10);
    assertThat(hits.get(0).pageNumbers()).containsExactly(1);
    Set<Integer> pages = new HashSet<>();
    for (SearchHit h : hits) {
      assertThat(h.documentId()).isEqualTo(document);
      assertThat(pages.addAll(h.pageNumbers())).as("each result its own page").isTrue();
    }
    assertThat(hits.get(0).content()).contains("note 0").contains("note 11");
  }

  @Test
  @DisplayName("a limit the document cannot fill returns what there is, once")
  void fewerPlacesThanTheLimit() {
    List<SearchHit> hits = search.search(tenant, new SearchRequest("saffron crocus stigma harvest", 40)).await();
    assertThat(hits).hasSize(26);
    assertThat(hits.stream().map(SearchHit::chunkId).distinct()).hasSize(26);
  }
}
