package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.support.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("term_stats keeps each term's document frequency equal to its postings in chunk_terms")
class TermStatsTest {
  static TestDatabase db;

  @BeforeAll
  static void setUp() {
    db = TestDatabase.create();
  }

  @AfterAll
  static void tearDown() {
    if (db != null) {
      db.close();
    }
  }

  @Test
  @DisplayName("inserts, a content update and a document delete keep df exact, per tenant")
  void followsWrites() throws Exception {
    try (Connection c = db.jdbc(); Statement s = c.createStatement()) {
      Corpus corpus = new Corpus(c, SharedEmbedder.get());
      UUID a = corpus.tenant("df-a");
      UUID b = corpus.tenant("df-b");
      corpus.doc(a, "one").text("apple banana").text("apple cherry").insert();
      Corpus.Inserted two = corpus.doc(a, "two").text("apple apple date").insert();
      corpus.doc(b, "other").text("apple").insert();
      assertThat(df(s, a)).isEqualTo(Map.of("appl", 3L, "banana", 1L, "cherri", 1L, "date", 1L));
      assertThat(df(s, b)).isEqualTo(Map.of("appl", 1L));

      s.executeUpdate("UPDATE chunks SET content = 'elderberry fig' WHERE id = '" + two.chunkAt(0) + "'");
      assertThat(df(s, a)).isEqualTo(Map.of("appl", 2L, "banana", 1L, "cherri", 1L, "date", 0L,
          "elderberri", 1L, "fig", 1L));

      s.executeUpdate("DELETE FROM documents WHERE id = '" + two.documentId() + "'");
      assertThat(df(s, a)).isEqualTo(Map.of("appl", 2L, "banana", 1L, "cherri", 1L, "date", 0L,
          "elderberri", 0L, "fig", 0L));
      assertThat(df(s, a)).isEqualTo(countedDf(s, a, df(s, a)));
    }
  }

  @Test
  @DisplayName("concurrent writers of one tenant, each a chunk per statement, neither deadlock nor lose counts")
  void concurrentWriters() throws Exception {
    UUID tenant;
    try (Connection c = db.jdbc()) {
      tenant = new Corpus(c, SharedEmbedder.get()).tenant("df-concurrent");
    }
    int writers = 4;
    int docsEach = 5;
    ExecutorService pool = Executors.newFixedThreadPool(writers);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int w = 0; w < writers; w++) {
        int writer = w;
        done.add(pool.submit(() -> {
          try (Connection c = db.jdbc()) {
            c.setAutoCommit(false);
            Corpus corpus = new Corpus(c, SharedEmbedder.get());
            for (int d = 0; d < docsEach; d++) {
              // Terms in opposite orders across chunks: the pattern that deadlocks without the lock.
              corpus.doc(tenant, "w" + writer + "d" + d)
                  .text(writer % 2 == 0 ? "zinc copper" : "copper zinc")
                  .text(writer % 2 == 0 ? "copper iron" : "iron zinc")
                  .insert();
            }
            c.commit();
          }
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
    try (Connection c = db.jdbc(); Statement s = c.createStatement()) {
      Map<String, Long> df = df(s, tenant);
      assertThat(df).isEqualTo(countedDf(s, tenant, df));
      assertThat(df.get("zinc")).isEqualTo((long) (writers * docsEach + writers / 2 * docsEach));
    }
  }

  private static Map<String, Long> df(Statement s, UUID tenant) throws Exception {
    Map<String, Long> out = new TreeMap<>();
    try (ResultSet rs = s.executeQuery(
        "SELECT term, df FROM term_stats WHERE tenant_id = '" + tenant + "'")) {
      while (rs.next()) {
        out.put(rs.getString(1), rs.getLong(2));
      }
    }
    return out;
  }

  /** df counted from the postings, for the same terms (absent terms count 0). */
  private static Map<String, Long> countedDf(Statement s, UUID tenant, Map<String, Long> terms)
      throws Exception {
    Map<String, Long> out = new TreeMap<>();
    for (String term : terms.keySet()) {
      try (ResultSet rs = s.executeQuery("SELECT count(*) FROM chunk_terms WHERE tenant_id = '"
          + tenant + "' AND term = '" + term + "'")) {
        rs.next();
        out.put(term, rs.getLong(1));
      }
    }
    return out;
  }
}
