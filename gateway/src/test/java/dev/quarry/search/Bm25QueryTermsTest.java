package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.support.TestDatabase;
import dev.quarry.support.TestStack;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("Full-text scoring of a long query: only its rarest terms count")
class Bm25QueryTermsTest {
  @AutoClose
  static final TestStack stack = TestStack.start();
  static final TestDatabase db = stack.db();
  static final Vertx vertx = stack.vertx();
  static final Pool pool = stack.pool();
  static SearchService search;
  static UUID tenant;
  static Corpus.Inserted doc;

  /** Distinct made-up words, each of which the stemmer keeps as it is. */
  static List<String> rare(int n) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add("zq" + (char) ('a' + i / 26) + (char) ('a' + i % 26) + "vk");
    }
    return out;
  }

  @BeforeAll
  static void setUp() throws Exception {
    search = new SearchService(vertx, pool, SharedEmbedder.get(), db.config());
    db.prepare(vertx, search);
    try (Connection c = db.jdbc()) {
      Corpus corpus = new Corpus(c, SharedEmbedder.get());
      tenant = corpus.tenant("glossary");
      doc = corpus.doc(tenant, "Glossary")
          .text(String.join(" ", rare(SearchService.QUERY_TERMS + 10)))  // 0: every rare word once
          .text("harbour harbour harbour")                               // 1: the common word alone
          .text("harbour ferry")
          .text("harbour crane")
          .insert();
    }
  }

  static List<UUID> matches(String query) {
    return search.rank(tenant, query, SearchMode.FULL_TEXT, 10).await().stream().map(RankedChunk::chunkId).toList();
  }

  @Test
  @DisplayName("a query of more distinct terms than QUERY_TERMS drops its commonest; a shorter one keeps it")
  void commonestDropped() {
    List<String> words = rare(SearchService.QUERY_TERMS + 10);
    assertThat(new java.util.HashSet<>(words)).hasSize(words.size());
    String shortQuery = String.join(" ", words.subList(0, 10)) + " harbour";
    assertThat(matches(shortQuery)).startsWith(doc.chunkAt(0)).contains(doc.chunkAt(1));
    String longQuery = String.join(" ", words) + " harbour";
    assertThat(matches(longQuery)).containsExactly(doc.chunkAt(0));
  }
}
