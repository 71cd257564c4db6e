package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.support.TestDatabase;
import dev.quarry.support.TestStack;
import dev.quarry.telemetry.QuarryMetrics;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * The in-memory BM25 copy against the database's ranking, as a property (jqwik): random tenants
 * (documents of chunks drawn from a small vocabulary, so terms repeat within and across chunks and
 * scores tie), random queries (known words, repeated words, a word nobody has), random posting
 * budgets (pruned and exact), limits and scopes. Whatever the corpus, the copy ranks the same
 * chunks in the same order with the same scores.
 */
@Label("BM25 from the gateway's copy ranks as the database does, for generated corpora and queries")
class TermIndexPropertiesTest {
  private static final List<String> WORDS = List.of("basalt", "granite", "quartz", "vein", "rock",
      "slate", "shale", "mica", "feldspar", "magma", "lava", "crust", "mantle", "fault", "fold",
      "strata", "sediment", "erosion", "glacier", "river", "delta", "fossil", "mineral", "crystal");

  private static TestStack stack;
  private static final AtomicLong clock = new AtomicLong();

  @BeforeContainer
  static void start() {
    stack = TestStack.start();
  }

  @AfterContainer
  static void stop() throws Exception {
    if (stack != null) {
      stack.close();
    }
  }

  record Case(List<List<String>> documents, String query, int budget, int limit, boolean scoped) {}

  @Provide
  Arbitrary<Case> cases() {
    Arbitrary<String> word = Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(6, Arbitraries.of(WORDS.subList(0, 6))),
        net.jqwik.api.Tuple.of(3, Arbitraries.of(WORDS)));
    Arbitrary<String> chunk = word.list().ofMinSize(1).ofMaxSize(25).map(w -> String.join(" ", w));
    Arbitrary<List<String>> document = chunk.list().ofMinSize(1).ofMaxSize(8);
    Arbitrary<String> query = Arbitraries.frequencyOf(
            net.jqwik.api.Tuple.of(8, word), net.jqwik.api.Tuple.of(1, Arbitraries.just("obsidian")))
        .list().ofMinSize(1).ofMaxSize(7).map(w -> String.join(" ", w));
    return Combinators.combine(document.list().ofMinSize(1).ofMaxSize(5), query,
        Arbitraries.integers().between(0, 60), Arbitraries.integers().between(1, 40),
        Arbitraries.of(true, false)).as(Case::new);
  }

  @Property(tries = 40)
  @Label("same chunks, same order, same scores, in and out of a scope")
  void sameRanking(@ForAll("cases") Case c) throws Exception {
    TestDatabase db = stack.db();
    Vertx vertx = stack.vertx();
    Pool pool = stack.pool();
    UUID tenant;
    List<UUID> documents = new ArrayList<>();
    try (Connection jdbc = db.jdbc()) {
      Corpus corpus = new Corpus(jdbc, SharedEmbedder.get());
      tenant = corpus.tenant("property-" + UUID.randomUUID());
      int n = 0;
      for (List<String> chunks : c.documents()) {
        Corpus.Doc doc = corpus.doc(tenant, "Doc " + n++);
        chunks.forEach(doc::text);
        documents.add(doc.insert().documentId());
      }
    }
    SearchService inDatabase = new SearchService(vertx, pool, SharedEmbedder.get(),
        db.config().withSearchMemoryMb(0), c.budget(), new QuarryMetrics(), new TermIndexes(pool, 0));
    QuarryMetrics metrics = new QuarryMetrics();
    TermIndexes copies = new TermIndexes(pool, 16L << 20, clock::get);
    SearchService inMemory = new SearchService(vertx, pool, SharedEmbedder.get(), db.config(), c.budget(),
        metrics, copies);
    clock.addAndGet(3_600_000_000_000L);
    copies.refresh(tenant, -1).await();
    assertThat(copies.current(tenant)).isNotNull();

    List<RankedChunk> expected = inDatabase.rank(tenant, c.query(), SearchMode.FULL_TEXT, c.limit()).await();
    List<RankedChunk> actual = inMemory.rank(tenant, c.query(), SearchMode.FULL_TEXT, c.limit()).await();
    assertThat(actual).extracting(RankedChunk::chunkId)
        .containsExactlyElementsOf(expected.stream().map(RankedChunk::chunkId).toList());
    assertThat(actual).extracting(RankedChunk::documentId)
        .containsExactlyElementsOf(expected.stream().map(RankedChunk::documentId).toList());
    for (int i = 0; i < expected.size(); i++) {
      assertThat(Math.abs(actual.get(i).score() - expected.get(i).score()))
          .isLessThanOrEqualTo(1e-9 * Math.abs(expected.get(i).score()));
    }

    if (c.scoped()) {
      Set<UUID> scope = new HashSet<>(documents.subList(0, (documents.size() + 1) / 2));
      SearchRequest request = new SearchRequest(c.query(), Math.min(c.limit(), 20), scope);
      List<SearchHit> fromDatabase = inDatabase.search(tenant, request).await();
      List<SearchHit> fromMemory = inMemory.search(tenant, request).await();
      assertThat(fromMemory).extracting(SearchHit::chunkId)
          .containsExactlyElementsOf(fromDatabase.stream().map(SearchHit::chunkId).toList());
      assertThat(fromMemory).allSatisfy(h -> assertThat(scope).contains(h.documentId()));
    }
    var counter = metrics.registry().find("quarry_search_fulltext_rankings").tag("source", "memory").counter();
    if (!expected.isEmpty()) {
      assertThat(counter == null ? 0 : counter.count()).as("ranked from the copy").isEqualTo(c.scoped() ? 2 : 1);
    }
  }
}
