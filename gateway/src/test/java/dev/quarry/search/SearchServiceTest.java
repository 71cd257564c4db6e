package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quarry.support.TestDatabase;
import dev.quarry.support.TestStack;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.sql.Connection;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("Search: hybrid retrieval over one tenant's chunks")
class SearchServiceTest {
  @AutoClose
  static final TestStack stack = TestStack.start();
  static final TestDatabase db = stack.db();
  static final Vertx vertx = stack.vertx();
  static final Pool pool = stack.pool();
  static SearchService search;
  static UUID tenant;
  static UUID otherTenant;
  static Corpus.Inserted cars;
  static Corpus.Inserted faults;
  static Corpus.Inserted cooking;
  static Corpus.Inserted otherTenantsFaults;

  @BeforeAll
  static void setUp() throws Exception {
    Embedder embedder = SharedEmbedder.get();
    search = new SearchService(vertx, pool, embedder, db.config());
    db.prepare(vertx, search);
    try (Connection c = db.jdbc()) {
      Corpus corpus = new Corpus(c, embedder);
      tenant = corpus.tenant("acme");
      otherTenant = corpus.tenant("globex");
      cars = corpus.doc(tenant, "Vehicle handbook")
          .header(1, "Engine care")
          .text("Replace the oil filter every ten thousand kilometres to keep the engine clean.")
          .text("To raise the top speed of an automobile, reduce aerodynamic drag and increase "
              + "engine output.")
          .text("Tyre pressure should be checked monthly, when the tyres are cold.")
          .insert();
      // Near-identical codes on their own, and the wanted one inside a longer paragraph: its
      // embedding is about the paragraph, theirs about the code.
      Corpus.Doc f = corpus.doc(tenant, "Controller fault log").header(1, "Faults");
      for (String code : List.of("ZK4471R8", "ZK4417R9", "ZK4471P9")) {
        f.text("Fault " + code + ".");
      }
      f.text("During the spring inspection the pump controller stopped twice; the technicians "
          + "traced it to a worn inlet seal, which let the pressure drop below the threshold, and "
          + "the log showed fault ZK4471R9 each time before the seal was replaced.");
      faults = f.insert();
      cooking = corpus.doc(tenant, "Bread")
          .header(1, "Sourdough")
          .text("Feed the starter with flour and water the night before baking.")
          .text("Bake the loaf in a preheated oven until the crust is deep brown.")
          .insert();
      otherTenantsFaults = corpus.doc(otherTenant, "Globex fault log")
          .header(1, "Faults")
          .text("The pump controller reported fault ZK4471R9 after the inlet pressure dropped.")
          .insert();
    }
  }

  static List<SearchHit> run(String query, int limit) {
    return search.search(tenant, new SearchRequest(query, limit)).await();
  }

  static List<UUID> ranking(String query, SearchMode mode, int limit) {
    return search.rank(tenant, query, mode, limit).await().stream()
        .map(RankedChunk::chunkId).toList();
  }

  @Test
  @DisplayName("every hit carries exactly the docs/CONTRACT.md keys, with their types")
  void contractKeys() {
    List<SearchHit> hits = run("oil filter", 3);
    assertThat(hits).isNotEmpty();
    JsonObject json = hits.get(0).toJson();
    assertThat(json.fieldNames()).containsExactlyInAnyOrder("chunk_id", "content", "document_id",
        "document_title", "document_uri", "score", "page_numbers", "headings", "doc_item_refs",
        "labels");
    assertThat(UUID.fromString(json.getString("chunk_id"))).isNotNull();
    assertThat(UUID.fromString(json.getString("document_id"))).isEqualTo(cars.documentId());
    assertThat(json.getString("content")).contains("oil filter");
    assertThat(json.getString("document_title")).isEqualTo("Vehicle handbook");
    assertThat(json.getString("document_uri")).startsWith("file:");
    assertThat(json.getValue("score")).isInstanceOf(Double.class);
    assertThat(json.getJsonArray("page_numbers")).containsExactly(1);
    assertThat(json.getJsonArray("headings")).containsExactly("Engine care");
    JsonArray refs = json.getJsonArray("doc_item_refs");
    assertThat(refs).isNotEmpty().allSatisfy(r -> assertThat((String) r).matches("#/texts/\\d+"));
    assertThat(json.getJsonArray("labels")).contains("text");
  }

  @Test
  @DisplayName("returns at most `limit` hits, best first")
  void limitHonoured() {
    assertThat(run("pump controller fault pressure", 2)).hasSize(2);
    List<RankedChunk> ranked = search.rank(tenant, "pump controller fault", SearchMode.HYBRID, 4)
        .await();
    assertThat(ranked).hasSize(4);
    assertThat(ranked).extracting(RankedChunk::score).isSortedAccordingTo((a, b) -> Double.compare(b, a));
  }

  @Test
  @DisplayName("hybrid finds a paraphrase that full-text misses")
  void paraphrase() {
    UUID target = cars.chunkAt(2);
    String query = "how can I make my car go faster";
    assertThat(ranking(query, SearchMode.FULL_TEXT, 20)).doesNotContain(target);
    assertThat(ranking(query, SearchMode.VECTOR, 1)).containsExactly(target);
    assertThat(ranking(query, SearchMode.HYBRID, 3)).contains(target);
    assertThat(run(query, 3)).extracting(SearchHit::documentId).contains(cars.documentId());
  }

  @Test
  @DisplayName("hybrid finds an exact identifier that vectors miss")
  void identifier() {
    UUID target = faults.chunkAt(4); // ZK4471R9
    assertThat(ranking("ZK4471R9", SearchMode.VECTOR, 1)).doesNotContain(target);
    assertThat(ranking("ZK4471R9", SearchMode.FULL_TEXT, 1)).containsExactly(target);
    assertThat(ranking("ZK4471R9", SearchMode.HYBRID, 1)).containsExactly(target);
  }

  @Test
  @DisplayName("another tenant's rows are never returned, even when they match best")
  void tenantIsolation() {
    List<SearchHit> hits = run("ZK4471R9 pump controller fault", 20);
    assertThat(hits).isNotEmpty();
    assertThat(hits).extracting(SearchHit::documentId)
        .doesNotContain(otherTenantsFaults.documentId());
    for (SearchMode mode : SearchMode.values()) {
      assertThat(search.rank(tenant, "ZK4471R9", mode, 50).await())
          .extracting(RankedChunk::documentId).doesNotContain(otherTenantsFaults.documentId());
    }
    List<SearchHit> theirs = search.search(otherTenant, new SearchRequest("ZK4471R9", 20))
        .await();
    assertThat(theirs).extracting(SearchHit::documentId)
        .containsOnly(otherTenantsFaults.documentId());
  }

  @Test
  @DisplayName("document_ids narrows the search to those documents")
  void documentScope() {
    List<SearchHit> hits = search.search(tenant,
        new SearchRequest("pump controller fault", 10, Set.of(cooking.documentId(),
            cars.documentId()))).await();
    assertThat(hits).isNotEmpty();
    assertThat(hits).extracting(SearchHit::documentId)
        .allMatch(id -> id.equals(cooking.documentId()) || id.equals(cars.documentId()));
    List<SearchHit> none = search.search(tenant,
        new SearchRequest("pump controller fault", 10, Set.of(otherTenantsFaults.documentId())))
        .await();
    assertThat(none).as("another tenant's document id in the scope").isEmpty();
  }

  @Test
  @DisplayName("the hits come in the order of the hybrid ranking (the fusion of the two rankings"
      + " computed apart matches the one-statement fusion)")
  void hitsFollowHybridRanking() {
    String query = "pump controller fault pressure seal";
    List<UUID> hybrid = ranking(query, SearchMode.HYBRID, 20);
    List<UUID> hits = run(query, 5).stream().map(SearchHit::chunkId).toList();
    assertThat(hits).isNotEmpty();
    assertThat(hybrid).containsSubsequence(hits);
    assertThat(hits.get(0)).isEqualTo(hybrid.get(0));
  }

  @Test
  @DisplayName("a new query (embedded while the full text is ranked) and the same query repeated"
      + " (vector kept from the first) give the same hits")
  void newAndRepeatedQueriesAgree() {
    String query = "engine oil and tyre pressure checks";
    List<SearchHit> first = run(query, 5);
    List<SearchHit> repeated = run(query, 5);
    assertThat(first).isNotEmpty();
    assertThat(repeated).usingRecursiveComparison().isEqualTo(first);
  }

  @Test
  @DisplayName("an empty document_ids searches all of the tenant's documents")
  void emptyScopeIsEverything() {
    List<SearchHit> scoped = search.search(tenant,
        new SearchRequest("pump controller fault", 10, Set.of())).await();
    assertThat(scoped).extracting(SearchHit::chunkId)
        .containsExactlyElementsOf(run("pump controller fault", 10).stream()
            .map(SearchHit::chunkId).toList());
    assertThat(scoped).extracting(SearchHit::documentId).contains(faults.documentId());
  }

  @Test
  @DisplayName("document_ids with a null or more than the maximum ids is rejected")
  void badScope() {
    Set<UUID> withNull = new java.util.HashSet<>();
    withNull.add(null);
    assertThatThrownBy(() -> new SearchRequest("oil", 5, withNull))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("document_ids");
    Set<UUID> tooMany = new java.util.HashSet<>();
    while (tooMany.size() <= SearchRequest.MAX_DOCUMENT_IDS) {
      tooMany.add(UUID.randomUUID());
    }
    assertThatThrownBy(() -> new SearchRequest("oil", 5, tooMany))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at most " + SearchRequest.MAX_DOCUMENT_IDS);
  }

  @Test
  @DisplayName("a blank, overlong or badly limited query is rejected with a clear message")
  void badQueries() {
    int max = db.config().maxQueryChars();
    assertRejected(new SearchRequest("   ", 5), "'query' is empty");
    assertRejected(new SearchRequest(null, 5), "'query' is empty");
    assertRejected(new SearchRequest("x".repeat(max + 1), 5), "limit is " + max);
    assertRejected(new SearchRequest("oil", 0), "'limit' must be between 1 and");
    assertRejected(new SearchRequest("oil", db.config().searchMaxLimit() + 1),
        "'limit' must be between 1 and " + db.config().searchMaxLimit());
    assertThatThrownBy(() -> search.rank(tenant, "", SearchMode.HYBRID, 5).await())
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  @DisplayName("the query is data: SQL in it is searched for, not run")
  void queryIsBound() {
    List<SearchHit> hits = run("'); DELETE FROM chunks; --", 5);
    assertThat(hits).hasSizeLessThanOrEqualTo(5);
    assertThat(run("oil filter", 1)).hasSize(1);
  }

  private static void assertRejected(SearchRequest request, String message) {
    assertThatThrownBy(() -> search.search(tenant, request).await())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(message);
  }
}
