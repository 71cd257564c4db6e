package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.config.Config;
import dev.quarry.support.TestDatabase;
import dev.quarry.support.TestStack;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.sql.Connection;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("Search: each hit comes with its surrounding context")
class ContextExpansionTest {
  static final int BUDGET = 300;

  @AutoClose
  static final TestStack stack = TestStack.start();
  static final TestDatabase db = stack.db();
  static final Vertx vertx = stack.vertx();
  static final Pool pool = stack.pool();
  static SearchService search;
  static UUID tenant;

  @BeforeAll
  static void setUp() {
    search = new SearchService(vertx, pool, SharedEmbedder.get(), withBudget(db.config(), BUDGET));
    db.prepare(vertx, search);
  }

  static Config withBudget(Config c, int budget) {
    return dev.quarry.config.Records.with(c, "contextBudgetChars", budget);
  }

  static Corpus corpus(Connection c) throws Exception {
    Corpus corpus = new Corpus(c, SharedEmbedder.get());
    if (tenant == null) {
      tenant = corpus.tenant("expansion");
    }
    return corpus;
  }

  /** The best hit within one document (limit 1, so no later hit merges into it). */
  static SearchHit top(String query, UUID documentId) {
    List<SearchHit> hits = search.search(tenant, new SearchRequest(query, 1, Set.of(documentId)))
        .await();
    assertThat(hits).hasSize(1);
    return hits.get(0);
  }

  /** A paragraph of exactly 80 characters. */
  static String para(String marker) {
    String base = "Paragraph " + marker + " talks about ordinary matters of the quarry at length";
    return (base + " ".repeat(80)).substring(0, 79) + ".";
  }

  @Test
  @DisplayName("the whole section when it fits the budget, and nothing beyond it")
  void wholeSection() throws Exception {
    Corpus.Doc doc;
    try (Connection c = db.jdbc()) {
      doc = corpus(c).doc(tenant, "Fits")
          .header(1, "Granite")
          .text("Granite is quarried in large blocks.")
          .text("The zebrafruit saw cuts granite slowly.")
          .text("Blocks are polished afterwards.")
          .header(1, "Marble")
          .text("Marble is softer than granite.");
      Corpus.Inserted ins = doc.insert();
      SearchHit hit = top("zebrafruit saw", ins.documentId());
      assertThat(hit.chunkId()).isEqualTo(ins.chunkAt(2));
      assertThat(hit.content()).isEqualTo(doc.join(0, 4));
      assertThat(hit.docItemRefs()).containsExactly("#/texts/0", "#/texts/1", "#/texts/2",
          "#/texts/3");
      assertThat(hit.labels()).containsExactly("section_header", "text");
      assertThat(hit.headings()).containsExactly("Granite");
    }
  }

  @Test
  @DisplayName("grows outward from the hit, alternating sides, until the budget")
  void growth() throws Exception {
    try (Connection c = db.jdbc()) {
      Corpus.Doc doc = corpus(c).doc(tenant, "Grows").header(1, "Long section");
      for (int i = 1; i <= 9; i++) {
        doc.text(para(i == 5 ? "yellowcake" : "number " + i));
      }
      Corpus.Inserted ins = doc.insert();
      SearchHit hit = top("yellowcake", ins.documentId());
      assertThat(hit.chunkId()).isEqualTo(ins.chunkAt(5));
      // 80-character items cost 82 with their separator: the hit, the next, the previous fit in
      // 300; a fourth would make 326.
      assertThat(hit.docItemRefs()).containsExactly("#/texts/4", "#/texts/5", "#/texts/6");
      assertThat(hit.content()).isEqualTo(doc.join(4, 7));
      assertThat(hit.content().length()).isLessThanOrEqualTo(BUDGET);
    }
  }

  @Test
  @DisplayName("a table is never split: whole when it is the hit, left out when it does not fit")
  void tables() throws Exception {
    StringBuilder table = new StringBuilder("| mineral | hardness | colour |\n|---|---|---|\n");
    for (int i = 0; i < 12; i++) {
      table.append("| mineral ").append(i).append(" | ").append(i % 10).append(" | grey |\n");
    }
    try (Connection c = db.jdbc()) {
      Corpus.Doc doc = corpus(c).doc(tenant, "Tables")
          .header(1, "Hardness")
          .text("The table below lists the hardness of each quartzite sample we measured.")
          .item("table", table.toString().strip())
          .text(para("closing"));
      Corpus.Inserted ins = doc.insert();
      assertThat(table.length()).isGreaterThan(BUDGET);

      SearchHit tableHit = top("mineral hardness colour grey", ins.documentId());
      assertThat(tableHit.chunkId()).isEqualTo(ins.chunkAt(2));
      assertThat(tableHit.content()).contains(table.toString().strip());
      assertThat(tableHit.docItemRefs()).containsExactly("#/tables/2");
      assertThat(tableHit.labels()).containsExactly("table");

      SearchHit before = top("quartzite sample", ins.documentId());
      assertThat(before.chunkId()).isEqualTo(ins.chunkAt(1));
      assertThat(before.docItemRefs()).doesNotContain("#/tables/2");
      assertThat(before.content()).doesNotContain("| mineral");
    }
  }

  @Test
  @DisplayName("never shorter than the hit, even when the hit alone exceeds the budget")
  void neverShorter() throws Exception {
    String huge = "The obsidian survey covered ".concat("many fields and ravines, ".repeat(30));
    try (Connection c = db.jdbc()) {
      Corpus.Doc doc = corpus(c).doc(tenant, "Huge")
          .header(1, "Fieldwork")
          .text(huge)
          .text("A short note follows.");
      Corpus.Inserted ins = doc.insert();
      SearchHit hit = top("obsidian survey ravines", ins.documentId());
      assertThat(hit.chunkId()).isEqualTo(ins.chunkAt(1));
      assertThat(hit.content()).isEqualTo(huge);
      assertThat(hit.docItemRefs()).containsExactly("#/texts/1");
    }
  }

  @Test
  @DisplayName("page headers, footers and footnotes are left out and cost nothing")
  void furniture() throws Exception {
    String longFooter = "Quarry Annual Report, confidential, page footer " + "x".repeat(300);
    try (Connection c = db.jdbc()) {
      Corpus.Doc doc = corpus(c).doc(tenant, "Furniture")
          .header(1, "Basalt")
          .text("Basalt columns form when lava cools.")
          .item("page_footer", longFooter)
          .page(2)
          .item("page_header", "Quarry Annual Report")
          .text("The tourmaline ledge sits above the basalt columns.")
          .item("footnote", "1. Measured in 2019.")
          .text("Access is by the north road.");
      Corpus.Inserted ins = doc.insert();
      SearchHit hit = top("tourmaline ledge", ins.documentId());
      assertThat(hit.chunkId()).isEqualTo(ins.chunkAt(4));
      // The section with its furniture is far over the budget; without it, it fits whole.
      assertThat(hit.content()).isEqualTo(String.join("\n\n", "Basalt",
          "Basalt columns form when lava cools.",
          "The tourmaline ledge sits above the basalt columns.",
          "Access is by the north road."));
      assertThat(hit.labels()).containsExactly("section_header", "text");
      assertThat(hit.docItemRefs()).containsExactly("#/texts/0", "#/texts/1", "#/texts/4",
          "#/texts/6");
      assertThat(hit.pageNumbers()).containsExactly(1, 2);
    }
  }

  @Test
  @DisplayName("hits whose contexts overlap become one result with the better score")
  void overlappingHitsMerge() throws Exception {
    try (Connection c = db.jdbc()) {
      Corpus.Doc doc = corpus(c).doc(tenant, "Merge").header(1, "Long section");
      for (int i = 1; i <= 12; i++) {
        doc.text(para(i == 5 || i == 7 ? "malachite " + i : "number " + i));
      }
      Corpus.Inserted ins = doc.insert();
      List<RankedChunk> ranked = search.rank(tenant, "malachite", SearchMode.FULL_TEXT, 5).await();
      assertThat(ranked).extracting(RankedChunk::chunkId)
          .containsExactlyInAnyOrder(ins.chunkAt(5), ins.chunkAt(7));

      List<SearchHit> hits = search.search(tenant,
          new SearchRequest("malachite", 2, Set.of(ins.documentId()))).await();
      // Each alone would be [4, 7) and [6, 9); together one result covering both (other hits
      // from the vector side may widen it), contiguous, with the better score.
      List<SearchHit> holding5 = hits.stream()
          .filter(h -> h.docItemRefs().contains("#/texts/5")).toList();
      assertThat(holding5).hasSize(1);
      SearchHit m = holding5.get(0);
      assertThat(m.docItemRefs()).contains("#/texts/4", "#/texts/5", "#/texts/6", "#/texts/7",
          "#/texts/8");
      assertThat(hits).filteredOn(h -> h.docItemRefs().contains("#/texts/7")).containsExactly(m);
      int first = Integer.parseInt(m.docItemRefs().get(0).substring("#/texts/".length()));
      int count = m.docItemRefs().size();
      assertThat(m.content()).isEqualTo(doc.join(first, first + count));
      assertThat(m.score()).isEqualTo(hits.get(0).score());
      assertThat(m.chunkId()).isIn(ins.chunkAt(5), ins.chunkAt(7));
    }
  }
}
