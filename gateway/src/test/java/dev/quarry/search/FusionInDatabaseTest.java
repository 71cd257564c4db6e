package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.search.ContextExpander.RankedHit;
import dev.quarry.search.SearchService.Fold;
import dev.quarry.support.SharedData;
import dev.quarry.support.TestStack;
import java.nio.file.Files;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The statement that fuses the vector ranking with the full-text one in the database must give
 * exactly the hits that {@link Fusion#DEFAULT} gives when it fuses the two rankings here: the same
 * chunks, in the same order, with the same scores to the last bit, and ties cut where Java's
 * {@link UUID} order cuts them. Over 300 real Vaswani abstracts with real embeddings, the first 40
 * Vaswani queries at several limits, a scope, an identifier that few chunks hold, a query no chunk
 * matches, and a group of identical chunks whose tie falls across the cut.
 */
@DisplayName("Search: fusion in the database gives exactly Fusion.DEFAULT's hits")
class FusionInDatabaseTest {
  static final int ABSTRACTS = 300;
  static final int PER_DOCUMENT = 10;
  static final int TIED = 8;

  @AutoClose
  static final TestStack stack = TestStack.start();
  static SearchService search;
  static UUID tenant;
  static final List<String> queries = new ArrayList<>();
  static final List<UUID> documents = new ArrayList<>();
  static final List<UUID> tied = new ArrayList<>();

  @BeforeAll
  static void setUp() throws Exception {
    Embedder embedder = SharedEmbedder.get();
    search = new SearchService(stack.vertx(), stack.pool(), embedder, stack.db().config());
    var dir = SharedData.path("retrieval/vaswani_npl");
    List<String> abstracts = new ArrayList<>();
    Matcher m = Pattern.compile("<DOCNO>(\\d+)</DOCNO>\\s*(.*?)</DOC>", Pattern.DOTALL)
        .matcher(Files.readString(dir.resolve("corpus/doc-text.trec")));
    while (m.find() && abstracts.size() < ABSTRACTS) {
      abstracts.add(m.group(2).strip().replaceAll("\\s+", " "));
    }
    Matcher q = Pattern.compile("<num>(\\d+)</num><title>\\s*(.*?)\\s*</title>", Pattern.DOTALL)
        .matcher(Files.readString(dir.resolve("query-text.trec")));
    while (q.find() && queries.size() < 40) {
      queries.add(q.group(2).replaceAll("\\s+", " "));
    }
    try (Connection c = stack.db().jdbc()) {
      Corpus corpus = new Corpus(c, embedder);
      tenant = corpus.tenant("vaswani");
      for (int start = 0; start < abstracts.size(); start += PER_DOCUMENT) {
        Corpus.Doc doc = corpus.doc(tenant, "Abstracts " + start).header(1, "Abstracts from " + start);
        for (int i = start; i < start + PER_DOCUMENT; i++) {
          if (i % 5 == 0) {
            doc.header(2, "Part " + i);
          }
          doc.text(abstracts.get(i));
        }
        documents.add(doc.insert().documentId());
      }
      corpus.doc(tenant, "Fault log").header(1, "Faults")
          .text("The pump controller reported fault ZK4471R9 after the inlet pressure dropped.")
          .insert();
      // Identical chunks (same text, same vector: every score ties), with ids whose first halves
      // alternate in sign, where Java's UUID order and PostgreSQL's disagree.
      for (int i = 0; i < TIED; i++) {
        UUID id = new UUID((i % 2 == 0 ? 0x1000L : 0x9000L << 48) + i, 0x8000_0000_0000_0000L + i);
        corpus.chunkIds = () -> id;
        corpus.doc(tenant, "Gaskets " + i).header(1, "Gaskets")
            .text("Torque the gasket bolts of the turbine casing crosswise to the specified value.")
            .chunk(0, 2).insert();
        tied.add(id);
      }
    }
    stack.db().prepare(stack.vertx(), search);
  }

  static List<RankedHit> hits(SearchRequest request, Fold fold) {
    return search.rankedHits(tenant, request, fold).await();
  }

  /** The hits through both paths, checked equal, and returned. */
  static List<RankedHit> same(SearchRequest request) {
    List<RankedHit> here = hits(request, Fold.NEVER);
    assertThat(hits(request, Fold.ALWAYS)).as("%s", request).isEqualTo(here);
    assertThat(hits(request, Fold.WHEN_READY)).as("%s", request).isEqualTo(here);
    return here;
  }

  @Test
  @DisplayName("the Vaswani queries at limits 1, 10 and 60: the same hits, order and scores")
  void queries() {
    int nonEmpty = 0;
    for (String query : queries) {
      for (int limit : List.of(1, 10, 60)) {
        nonEmpty += same(new SearchRequest(query, limit)).isEmpty() ? 0 : 1;
      }
    }
    assertThat(nonEmpty).isEqualTo(queries.size() * 3);
    // Both weights of Fusion.DEFAULT are exercised: a full list (vectors 0.75) here, few matches below.
    assertThat(search.rank(tenant, queries.get(0), SearchMode.FULL_TEXT, 100).await()).hasSize(100);
  }

  @Test
  @DisplayName("within a scope of documents; for an identifier few chunks hold; for a query nothing matches")
  void scopeFewMatchesAndNoMatch() {
    List<UUID> scope = documents.subList(3, 9);
    for (String query : queries.subList(0, 10)) {
      List<RankedHit> hits = same(new SearchRequest(query, 10, Set.copyOf(scope)));
      assertThat(hits).isNotEmpty().allSatisfy(h -> assertThat(scope).contains(h.documentId()));
    }
    assertThat(search.rank(tenant, "ZK4471R9", SearchMode.FULL_TEXT, 100).await()).hasSize(1);
    assertThat(same(new SearchRequest("ZK4471R9", 5))).isNotEmpty();
    assertThat(search.rank(tenant, "xylophone quixotically", SearchMode.FULL_TEXT, 100).await()).isEmpty();
    assertThat(same(new SearchRequest("xylophone quixotically", 5))).isNotEmpty();
  }

  @Test
  @DisplayName("identical chunks tie, and the cut through the tie keeps the lower ids in Java's UUID order")
  void tiesCutInJavaOrder() {
    // Limit 1: 6 fused hits, out of 8 chunks that all score the same.
    List<RankedHit> hits = same(new SearchRequest("torque the gasket bolts of the turbine casing", 1));
    assertThat(hits).hasSize(6);
    assertThat(hits).extracting(RankedHit::score).containsOnly(hits.get(0).score());
    Set<UUID> expected = tied.stream().sorted(Comparator.naturalOrder()).limit(6)
        .collect(Collectors.toSet());
    assertThat(hits).extracting(RankedHit::chunkId).containsExactlyInAnyOrderElementsOf(expected);
    // PostgreSQL's order (unsigned bytes) would have kept other ones.
    Set<UUID> byBytes = tied.stream().sorted(Comparator.comparing(UUID::toString)).limit(6)
        .collect(Collectors.toSet());
    assertThat(byBytes).isNotEqualTo(expected);
  }
}
