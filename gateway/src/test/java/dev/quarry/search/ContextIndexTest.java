package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.config.Config;
import dev.quarry.support.TestDatabase;
import dev.quarry.support.TestStack;
import dev.quarry.telemetry.QuarryMetrics;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Hits expanded from the gateway's copy of a tenant's hit contexts ({@link ContextIndex}) against
 * the database's fused-hits statement, on generated documents: nested sections, paragraphs short
 * and long (some with characters outside the Basic Multilingual Plane, which the database counts
 * as one character and Java as two), page headers, footers and footnotes between them, and chunks
 * of one item or of several. With every copy current, a search gives exactly the hits the database
 * gives, at a small budget (where the reach of each side decides) and a large one.
 */
@DisplayName("Hit contexts expanded from the gateway's copy, against the database's statement")
class ContextIndexTest {
  @AutoClose
  static final TestStack stack = TestStack.start();
  static final TestDatabase db = stack.db();
  static final Vertx vertx = stack.vertx();
  static final Pool pool = stack.pool();
  static final AtomicLong clock = new AtomicLong();
  static final List<String> queries = new ArrayList<>();
  static final List<UUID> documents = new ArrayList<>();
  static final String[] WORDS = {"granite", "basalt", "quarry", "marble", "slate", "saw", "block",
      "polish", "vein", "fault", "crane", "drill", "blast", "dust", "water", "permit", "survey"};
  static UUID tenant;

  @BeforeAll
  static void setUp() throws Exception {
    Random random = new Random(16);
    try (Connection c = db.jdbc()) {
      Corpus corpus = new Corpus(c, SharedEmbedder.get());
      tenant = corpus.tenant("contexts");
      for (int d = 0; d < 12; d++) {
        Corpus.Doc doc = corpus.doc(tenant, "Quarry report " + d + " " + words(random, 3));
        int page = 1;
        int items = 20 + random.nextInt(30);
        boolean ranged = random.nextBoolean();
        for (int i = 0; i < items; i++) {
          int roll = random.nextInt(20);
          if (roll == 0) {
            doc.page(++page).item("page_header", "Quarry report " + d + " page " + page);
          } else if (roll == 1) {
            doc.item("page_footer", "page " + page);
          } else if (roll == 2) {
            doc.item("footnote", "Note: " + words(random, 6));
          } else if (roll < 6) {
            doc.header(1 + random.nextInt(3), words(random, 2 + random.nextInt(3)));
          } else {
            String text = words(random, 5 + random.nextInt(roll > 17 ? 120 : 30));
            if (random.nextInt(6) == 0) {
              text = text + " \uD83E\uDEA8 \uD835\uDD18 " + words(random, 4);
            }
            doc.text(text);
          }
          if (ranged && i > 2 && random.nextInt(5) == 0) {
            int start = Math.max(0, i - 1 - random.nextInt(3));
            doc.chunk(start, i + 1);
          }
        }
        documents.add(doc.insert().documentId());
      }
    }
    for (int q = 0; q < 40; q++) {
      queries.add(words(random, 1 + random.nextInt(4)));
    }
    db.prepare(vertx, service(0, 300));
  }

  static String words(Random random, int n) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < n; i++) {
      b.append(i == 0 ? "" : " ").append(WORDS[random.nextInt(WORDS.length)]);
    }
    return b.toString();
  }

  static SearchService service(int memoryMb, int budgetChars) {
    return service(memoryMb, budgetChars, new QuarryMetrics());
  }

  static SearchService service(int memoryMb, int budgetChars, QuarryMetrics metrics) {
    Config config = ContextExpansionTest.withBudget(db.config(), budgetChars).withSearchMemoryMb(memoryMb);
    return new SearchService(vertx, pool, SharedEmbedder.get(), config, SearchService.POSTING_BUDGET,
        metrics, new TenantCopies(pool, memoryMb * 1024L * 1024L, clock::get));
  }

  /** Builds the tenant's three copies now (the clock moved past any throttle). */
  static void buildAll(SearchService search, UUID of) {
    search.termIndexes().settled().await(); // builds a search started would take the places
    clock.addAndGet(3_600_000_000_000L);
    for (var build : List.of(search.termIndexes().refresh(of, -1), search.vectorIndexes().refresh(of, -1))) {
      assertThat(build).isNotNull();
      build.await();
    }
    var contexts = search.contextIndexes().refresh(of, -1);
    assertThat(contexts).isNotNull();
    contexts.await();
    assertThat(search.contextIndexes().current(of)).isNotNull();
  }

  static SearchHit unscored(SearchHit h) {
    return new SearchHit(h.chunkId(), h.content(), h.documentId(), h.documentTitle(), h.documentUri(), 0,
        h.pageNumbers(), h.headings(), h.docItemRefs(), h.labels());
  }

  static double counted(QuarryMetrics metrics, String source) {
    var counter = metrics.registry().find("quarry_search_context_expansions").tag("source", source).counter();
    return counter == null ? 0 : counter.count();
  }

  @Test
  @DisplayName("every query, scoped and not, at budgets of 300 and 3,000 characters: the same hits from the copy as from the database")
  void sameHitsAsTheDatabase() {
    for (int budget : new int[] {300, 3_000}) {
      QuarryMetrics metrics = new QuarryMetrics();
      SearchService inMemory = service(64, budget, metrics);
      SearchService inDatabase = service(0, budget);
      buildAll(inMemory, tenant);
      int searches = 0;
      for (int i = 0; i < queries.size(); i++) {
        String query = queries.get(i);
        Set<UUID> scope = i % 3 == 0 ? Set.of(documents.get(i % documents.size()), UUID.randomUUID()) : Set.of();
        for (int limit : new int[] {3, 10}) {
          SearchRequest request = new SearchRequest(query, limit, scope);
          List<SearchHit> expected = inDatabase.search(tenant, request).await();
          List<SearchHit> actual = inMemory.search(tenant, request).await();
          // The scores are fused from the copies' rankings, whose similarities and BM25 sums may
          // differ from the database's in the last bits; everything else must be the same.
          assertThat(actual.stream().map(ContextIndexTest::unscored).toList())
              .as("%s (limit %d, budget %d)", query, limit, budget)
              .isEqualTo(expected.stream().map(ContextIndexTest::unscored).toList());
          for (int h = 0; h < actual.size(); h++) {
            assertThat(actual.get(h).score()).isCloseTo(expected.get(h).score(), org.assertj.core.data.Offset.offset(1e-5));
          }
          searches++;
        }
      }
      assertThat(counted(metrics, "database")).isZero();
      assertThat(counted(metrics, "memory")).isGreaterThanOrEqualTo(searches);
    }
  }

  @Test
  @DisplayName("a copy is used only at the database's version: a renamed document's title shows at once")
  void staleCopyIsNotUsed() throws Exception {
    QuarryMetrics metrics = new QuarryMetrics();
    SearchService search = service(64, 3_000, metrics);
    UUID other;
    UUID doc;
    try (Connection c = db.jdbc()) {
      Corpus corpus = new Corpus(c, SharedEmbedder.get());
      other = corpus.tenant("contexts-write");
      doc = corpus.doc(other, "Old title").header(1, "Granite").text("granite blocks are sawn").insert()
          .documentId();
    }
    buildAll(search, other);
    SearchRequest request = new SearchRequest("granite blocks", 5, Set.of());
    assertThat(search.search(other, request).await()).extracting(SearchHit::documentTitle).containsOnly("Old title");
    assertThat(counted(metrics, "memory")).isEqualTo(1);
    try (Connection c = db.jdbc();
        PreparedStatement s = c.prepareStatement("UPDATE documents SET title = 'New title' WHERE id = ?")) {
      s.setObject(1, doc);
      assertThat(s.executeUpdate()).isEqualTo(1);
    }
    assertThat(search.search(other, request).await()).extracting(SearchHit::documentTitle).containsOnly("New title");
    assertThat(counted(metrics, "database")).as("the stale copy was not used").isEqualTo(1);
    buildAll(search, other);
    assertThat(search.search(other, request).await()).extracting(SearchHit::documentTitle).containsOnly("New title");
    assertThat(counted(metrics, "memory")).isEqualTo(2);
  }
}
