package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.config.Config;
import dev.quarry.support.SharedData;
import dev.quarry.support.TestDatabase;
import dev.quarry.support.TestStack;
import dev.quarry.telemetry.QuarryMetrics;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The gateway's in-memory copy of a tenant's postings ({@link TermIndex}, {@link TermIndexes})
 * against the database's own ranking, on the 1,398 Cranfield abstracts and all 225 of their
 * queries: it must rank the same chunks in the same order with the same scores, be used only while
 * it holds the database's version, never hold another tenant's chunks, and stay within its budget.
 */
@DisplayName("BM25 ranked from the gateway's copy of the postings, against the database's ranking")
class TermIndexTest {
  static final int PER_DOCUMENT = 50;

  @AutoClose
  static final TestStack stack = TestStack.start();
  static final TestDatabase db = stack.db();
  static final Vertx vertx = stack.vertx();
  static final Pool pool = stack.pool();
  static final AtomicLong clock = new AtomicLong();
  static final List<String> queries = new ArrayList<>();
  static final List<UUID> documents = new ArrayList<>();
  static UUID tenant;

  @BeforeAll
  static void setUp() throws Exception {
    var dir = SharedData.path("retrieval/cranfield");
    List<String> abstracts = new ArrayList<>();
    Matcher d = Pattern.compile("\\.I \\d+\\s*\\n\\.T\\n(.*?)\\n\\.A\\n.*?\\.W\\n(.*?)(?=\\n\\.I |\\z)", Pattern.DOTALL)
        .matcher(Files.readString(dir.resolve("cran.all.1400")).replace("\r\n", "\n"));
    while (d.find()) {
      abstracts.add((d.group(1) + " " + d.group(2)).replaceAll("\\s+", " ").strip());
    }
    Matcher q = Pattern.compile("\\.I \\d+\\s*\\n\\.W\\n(.*?)(?=\\n\\.I |\\z)", Pattern.DOTALL)
        .matcher(Files.readString(dir.resolve("cran.qry")).replace("\r\n", "\n"));
    while (q.find()) {
      queries.add(q.group(1).replaceAll("\\s+", " ").strip());
    }
    assertThat(abstracts).hasSizeGreaterThan(1_300);
    assertThat(queries).hasSize(225);
    Embedder embedder = SharedEmbedder.get();
    try (Connection c = db.jdbc()) {
      c.setAutoCommit(false);
      tenant = new Corpus(c, embedder).tenant("cranfield");
      List<String[]> keyed = new ArrayList<>();
      for (int i = 0; i < abstracts.size(); i++) {
        keyed.add(new String[] {Integer.toString(i + 1), abstracts.get(i)});
      }
      documents.addAll(Corpus.bulk(c, tenant, keyed, PER_DOCUMENT, "Cranfield abstracts",
          embedder.modelName(), embedder.dimensions(), new java.util.HashMap<>()));
      c.commit();
    }
    db.prepare(vertx, service(0, 10_000));
  }

  /** A search service whose copies have {@code memoryMb} of heap and this test's clock. */
  static SearchService service(int memoryMb, int postingBudget) {
    return service(memoryMb, postingBudget, new QuarryMetrics());
  }

  static SearchService service(int memoryMb, int postingBudget, QuarryMetrics metrics) {
    Config config = db.config().withSearchMemoryMb(memoryMb);
    return new SearchService(vertx, pool, SharedEmbedder.get(), config, postingBudget, metrics,
        new TermIndexes(pool, memoryMb * 1024L * 1024L, clock::get));
  }

  /** Builds the tenant's copy now (the test's clock moved past any throttle) and returns it. */
  static TermIndex built(TermIndexes indexes, UUID of) {
    indexes.settled().await(); // builds a search started (of any kind) would take the places
    clock.addAndGet(3_600_000_000_000L);
    var build = indexes.refresh(of, -1);
    assertThat(build).as("a build starts").isNotNull();
    build.await();
    return indexes.current(of);
  }

  /** A new tenant holding one document of one chunk, {@code text}. */
  static UUID tenantWith(String name, String text) throws Exception {
    try (Connection c = db.jdbc()) {
      Corpus corpus = new Corpus(c, SharedEmbedder.get());
      UUID id = corpus.tenant(name);
      corpus.doc(id, name).text(text).insert();
      return id;
    }
  }

  static double counted(QuarryMetrics metrics, String source) {
    var counter = metrics.registry().find("quarry_search_fulltext_rankings").tag("source", source).counter();
    return counter == null ? 0 : counter.count();
  }

  @Test
  @DisplayName("every Cranfield query ranks the same 100 chunks, in the same order, with the same scores, at two posting budgets")
  void sameRankingAsTheDatabase() {
    for (int budget : new int[] {10_000, 40}) {
      SearchService inDatabase = service(0, budget);
      QuarryMetrics metrics = new QuarryMetrics();
      SearchService inMemory = service(64, budget, metrics);
      TermIndex copy = built(inMemory.termIndexes(), tenant);
      assertThat(copy).isNotNull();
      assertThat(copy.chunks()).isGreaterThan(1_300);
      int differentOrder = 0;
      for (String query : queries) {
        List<RankedChunk> expected = inDatabase.rank(tenant, query, SearchMode.FULL_TEXT, 100).await();
        List<RankedChunk> actual = inMemory.rank(tenant, query, SearchMode.FULL_TEXT, 100).await();
        assertThat(actual).as("hits for %s", query).hasSameSizeAs(expected);
        assertThat(expected).as("the query %s matches something", query).isNotEmpty();
        for (int i = 0; i < expected.size(); i++) {
          RankedChunk e = expected.get(i);
          RankedChunk a = actual.get(i);
          assertThat(Math.abs(a.score() - e.score())).as("score %d of %s", i, query)
              .isLessThanOrEqualTo(1e-9 * Math.abs(e.score()));
          assertThat(a.documentId()).isNotNull();
          if (!a.chunkId().equals(e.chunkId())) {
            // Only chunks whose scores tie (to the last bits) may trade places.
            differentOrder++;
            assertThat(actual.stream().map(RankedChunk::chunkId)).as("%s: %s", query, e)
                .contains(e.chunkId());
          }
        }
      }
      assertThat(differentOrder).as("positions held by another, equally scored chunk").isLessThan(queries.size());
      assertThat(counted(metrics, "memory")).isEqualTo(queries.size());
      assertThat(counted(metrics, "database")).isZero();
    }
  }

  @Test
  @DisplayName("a scoped hybrid search returns the same hits from the copy as from the database")
  void scopedSearchTheSame() {
    SearchService inDatabase = service(0, 10_000);
    QuarryMetrics metrics = new QuarryMetrics();
    SearchService inMemory = service(64, 10_000, metrics);
    built(inMemory.termIndexes(), tenant);
    Random random = new Random(7);
    for (int i = 0; i < 30; i++) {
      String query = queries.get(random.nextInt(queries.size()));
      java.util.Set<UUID> scope = java.util.Set.of(documents.get(2 * i % documents.size()),
          documents.get((2 * i + 1) % documents.size()), UUID.randomUUID());
      SearchRequest request = new SearchRequest(query, 10, scope);
      List<SearchHit> expected = inDatabase.search(tenant, request).await();
      List<SearchHit> actual = inMemory.search(tenant, request).await();
      assertThat(actual.stream().map(SearchHit::chunkId).toList()).as(query)
          .isEqualTo(expected.stream().map(SearchHit::chunkId).toList());
      assertThat(actual).allSatisfy(h -> assertThat(scope).contains(h.documentId()));
    }
    assertThat(counted(metrics, "memory")).isEqualTo(30);
  }

  @Test
  @DisplayName("a copy is used only at the database's version: after a write the database ranks until the copy is rebuilt")
  void staleCopyIsNotUsed() throws Exception {
    UUID other = tenantWith("writes", "basalt columns cool slowly");
    UUID added;
    QuarryMetrics metrics = new QuarryMetrics();
    SearchService search = service(64, 10_000, metrics);
    TermIndex first = built(search.termIndexes(), other);
    assertThat(search.rank(other, "zyzzogeton basalt", SearchMode.FULL_TEXT, 10).await()).hasSize(1);
    assertThat(counted(metrics, "memory")).isEqualTo(1);

    try (Connection c = db.jdbc()) {
      added = new Corpus(c, SharedEmbedder.get()).doc(other, "Second").text("a zyzzogeton on basalt").insert().documentId();
    }
    List<RankedChunk> afterWrite = search.rank(other, "zyzzogeton basalt", SearchMode.FULL_TEXT, 10).await();
    assertThat(afterWrite).hasSize(2);
    assertThat(afterWrite.get(0).documentId()).isEqualTo(added);
    assertThat(counted(metrics, "database")).as("the stale copy was not used").isEqualTo(1);

    TermIndex second = built(search.termIndexes(), other);
    assertThat(second.version).isGreaterThan(first.version);
    assertThat(search.rank(other, "zyzzogeton basalt", SearchMode.FULL_TEXT, 10).await())
        .extracting(RankedChunk::chunkId).containsExactlyElementsOf(afterWrite.stream().map(RankedChunk::chunkId).toList());
    assertThat(counted(metrics, "memory")).isEqualTo(2);

    try (Connection c = db.jdbc(); PreparedStatement s = c.prepareStatement("DELETE FROM documents WHERE id = ?")) {
      s.setObject(1, added);
      assertThat(s.executeUpdate()).isEqualTo(1);
    }
    assertThat(search.rank(other, "zyzzogeton basalt", SearchMode.FULL_TEXT, 10).await())
        .extracting(RankedChunk::documentId).doesNotContain(added).hasSize(1);
    assertThat(counted(metrics, "database")).isEqualTo(2);
    // A word no chunk holds any more ranks nothing, without reading a posting anywhere.
    assertThat(search.rank(other, "zyzzogeton", SearchMode.FULL_TEXT, 10).await()).isEmpty();
  }

  @Test
  @DisplayName("a tenant's copy holds its own chunks only: another tenant's words find nothing")
  void tenantsApart() throws Exception {
    UUID alone = tenantWith("alone", "an obsidian flake");
    QuarryMetrics metrics = new QuarryMetrics();
    SearchService search = service(64, 10_000, metrics);
    TermIndex copy = built(search.termIndexes(), alone);
    assertThat(copy.chunks()).isEqualTo(1);
    // Cranfield's words are all over the other tenant; here they match nothing.
    assertThat(search.rank(alone, "aeroelastic models of heated high speed aircraft obsidian",
        SearchMode.FULL_TEXT, 10).await()).hasSize(1);
    assertThat(search.rank(alone, "aeroelastic models of heated high speed aircraft",
        SearchMode.FULL_TEXT, 10).await()).isEmpty();
  }

  @Test
  @DisplayName("copies stay within their budget: the one used longest ago makes room; one over half the budget is not made")
  void withinBudget() throws Exception {
    UUID[] smalls = {tenantWith("small-0", "gneiss and schist"),
        tenantWith("small-1", "pumice floats on water"), tenantWith("small-2", "tuff from an old eruption")};
    TermIndexes roomy = new TermIndexes(pool, 64L << 20, clock::get);
    long[] sizes = new long[3];
    for (int i = 0; i < 3; i++) {
      sizes[i] = built(roomy, smalls[i]).bytes();
    }
    // Room for any two of the three, not for all of them.
    long budget = sizes[0] + sizes[1] + sizes[2] - 1;
    TermIndexes indexes = new TermIndexes(pool, budget, clock::get);
    assertThat(built(indexes, smalls[0])).isNotNull();
    assertThat(built(indexes, smalls[1])).isNotNull();
    assertThat(indexes.bytes()).isEqualTo(sizes[0] + sizes[1]);
    assertThat(built(indexes, smalls[2])).isNotNull();
    assertThat(indexes.current(smalls[0])).as("used longest ago: evicted").isNull();
    assertThat(indexes.current(smalls[1])).isNotNull();
    assertThat(indexes.bytes()).isEqualTo(sizes[1] + sizes[2]).isLessThanOrEqualTo(budget);

    // A tenant over half the budget is not copied, so it cannot push every other tenant out.
    long big = built(roomy, tenant).bytes();
    TermIndexes half = new TermIndexes(pool, 2 * big - 2, clock::get);
    clock.addAndGet(3_600_000_000_000L);
    half.refresh(tenant, -1).await();
    assertThat(half.current(tenant)).as("over half the budget").isNull();
    assertThat(half.bytes()).isZero();
    // Found too large, it is not sized again for searches that know no version (every search of
    // a tenant without any copy) until minutes pass; a search that reads another version may.
    clock.addAndGet(10_000_000_000L);
    assertThat(half.refresh(tenant, -1)).as("sized again too soon").isNull();
    clock.addAndGet(TenantCopies.TOO_LARGE_RETRY_NANOS);
    var again = half.refresh(tenant, -1);
    assertThat(again).isNotNull();
    again.await();
    assertThat(half.current(tenant)).isNull();
    clock.addAndGet(10_000_000_000L);
    assertThat(half.refresh(tenant, Long.MAX_VALUE)).as("another version").isNotNull().satisfies(f -> f.await());
    assertThat(built(half, smalls[0])).isNotNull();
    TermIndexes justHalf = new TermIndexes(pool, 2 * big, clock::get);
    assertThat(built(justHalf, tenant)).as("exactly half the budget").isNotNull();
  }

  @Test
  @DisplayName("long and non-ASCII terms count at their length: the copy reserves what the database's term statistics say")
  void longTermsCount() throws Exception {
    Random random = new Random(16);
    StringBuilder text = new StringBuilder("ελληνικά καφé naïve ");
    for (int w = 0; w < 40; w++) {
      for (int i = 0; i < 1_000; i++) {
        text.append((char) ('a' + random.nextInt(26)));
      }
      text.append(' ');
    }
    UUID wordy = tenantWith("wordy", text.toString());
    UUID plain = tenantWith("plain", "ash");
    TermIndexes indexes = new TermIndexes(pool, 64L << 20, clock::get);
    TermIndex copy = built(indexes, wordy);
    long expected;
    try (Connection c = db.jdbc();
        PreparedStatement st = c.prepareStatement("SELECT count(*), sum(df), sum(octet_length(term))"
            + " FROM term_stats WHERE tenant_id = ? AND df > 0")) {
      st.setObject(1, wordy);
      var r = st.executeQuery();
      r.next();
      assertThat(r.getLong(3)).as("forty words of 1,000 letters").isGreaterThan(40_000);
      expected = TermIndex.estimateBytes(1, r.getLong(2), r.getLong(1), r.getLong(3), 1);
    }
    assertThat(copy.bytes()).isEqualTo(expected);
    assertThat(indexes.bytes()).isEqualTo(expected);
    assertThat(copy.bytes() - built(indexes, plain).bytes()).isGreaterThan(40_000);
    for (String term : List.of("ash", "καφé", "naïve", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "")) {
      assertThat(TermIndex.utf8Length(term)).as(term)
          .isEqualTo(term.getBytes(java.nio.charset.StandardCharsets.UTF_8).length);
    }
  }

  @Test
  @DisplayName("one build of postings at a time across tenants; the others are refused until it ends")
  void oneBuildAtATime() throws Exception {
    UUID[] tenants = {tenantWith("busy-0", "granite"), tenantWith("busy-1", "basalt"),
        tenantWith("busy-2", "marble")};
    TermIndexes indexes = new TermIndexes(pool, 64L << 20, clock::get);
    clock.addAndGet(3_600_000_000_000L);
    List<io.vertx.core.Future<Void>> running = new ArrayList<>();
    try (Connection lock = db.jdbc()) {
      // Builds read corpus_stats first, so while it is locked the two builds cannot end.
      lock.setAutoCommit(false);
      lock.createStatement().execute("LOCK TABLE corpus_stats IN ACCESS EXCLUSIVE MODE");
      running.add(indexes.refresh(tenants[0], -1));
      assertThat(running).doesNotContainNull();
      assertThat(indexes.refresh(tenants[1], -1)).as("a second build of postings at once").isNull();
      assertThat(indexes.refresh(tenants[2], -1)).as("a third").isNull();
      lock.commit();
    }
    for (var build : running) {
      build.await();
    }
    assertThat(indexes.current(tenants[0])).isNotNull();
    assertThat(built(indexes, tenants[1])).as("once the first ended").isNotNull();
    assertThat(built(indexes, tenants[2])).as("and the next").isNotNull();
  }
}
