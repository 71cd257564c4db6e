package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.quarry.support.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("Each posting's impact is its BM25 weight at the tenant's length snapshot, through every write")
class TermImpactsTest {
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
  @DisplayName("inserts, a content update, a delete and a re-ingest keep impacts right and the snapshot near the average")
  void followsWrites() throws Exception {
    try (Connection c = db.jdbc(); Statement s = c.createStatement()) {
      Corpus corpus = new Corpus(c, SharedEmbedder.get());
      UUID tenant = corpus.tenant("impacts");
      UUID other = corpus.tenant("impacts-other");

      corpus.doc(tenant, "short").text("granite basalt").text("granite granite slate").insert();
      assertConsistent(s, tenant);
      // Corpus writes a chunk per statement: the first one (2 tokens) set the snapshot, the
      // second (3 tokens) moved the average to 2.5, within 25%, so the snapshot stayed.
      double first = snapshot(s, tenant);
      assertThat(first).isEqualTo(2.0);
      assertThat(average(s, tenant)).isEqualTo(2.5);

      // Three times as long on average: past the 25% band, so the snapshot moves and every old
      // posting is recomputed with it.
      String longText = "granite " + "quartz feldspar mica schist gneiss marble ".repeat(4);
      Corpus.Inserted big = corpus.doc(tenant, "long").text(longText).text(longText).insert();
      assertConsistent(s, tenant);
      assertThat(snapshot(s, tenant)).isNotEqualTo(first);
      assertThat(snapshot(s, tenant)).isCloseTo(average(s, tenant), within(1e-9));

      // A small change within the band keeps the snapshot; new postings use it.
      double kept = snapshot(s, tenant);
      corpus.doc(tenant, "one more").text("granite " + "quartz mica ".repeat(10)).insert();
      assertConsistent(s, tenant);
      assertThat(snapshot(s, tenant)).isEqualTo(kept);

      s.executeUpdate("UPDATE chunks SET content = 'slate' WHERE id = '" + big.chunkAt(0) + "'");
      assertConsistent(s, tenant);

      s.executeUpdate("DELETE FROM documents WHERE id = '" + big.documentId() + "'");
      assertConsistent(s, tenant);
      assertThat(snapshot(s, tenant) / average(s, tenant)).isBetween(1 / 1.25, 1.25);

      // Re-ingesting the same text gives the same postings again.
      corpus.doc(tenant, "long").text(longText).text(longText).insert();
      assertConsistent(s, tenant);

      // Another tenant's writes leave this one's snapshot alone.
      double before = snapshot(s, tenant);
      corpus.doc(other, "x").text("word ".repeat(200)).insert();
      assertConsistent(s, other);
      assertThat(snapshot(s, tenant)).isEqualTo(before);
    }
  }

  /** Every posting of the tenant: impact = term_impact(tf, length, snapshot), recomputed here. */
  private static void assertConsistent(Statement s, UUID tenant) throws Exception {
    double avgdl = snapshot(s, tenant);
    int rows = 0;
    try (ResultSet rs = s.executeQuery("SELECT tf, token_count, impact FROM chunk_terms WHERE tenant_id = '"
        + tenant + "'")) {
      while (rs.next()) {
        int tf = rs.getInt(1);
        int length = rs.getInt(2);
        double expected = tf * (SearchSql.K1 + 1)
            / (tf + SearchSql.K1 * (1 - SearchSql.B + SearchSql.B * length / Math.max(avgdl, 1.0)));
        assertThat((double) rs.getFloat(3)).isCloseTo(expected, within(1e-5));
        rows++;
      }
    }
    assertThat(rows).isPositive();
    assertThat(snapshot(s, tenant) / average(s, tenant)).isBetween(1 / 1.25, 1.25);
  }

  private static double snapshot(Statement s, UUID tenant) throws Exception {
    return single(s, "SELECT impact_avgdl FROM corpus_stats WHERE tenant_id = '" + tenant + "'");
  }

  /** The average chunk length, counted from the chunks themselves. */
  private static double average(Statement s, UUID tenant) throws Exception {
    return single(s, "SELECT greatest(avg(token_count), 1.0) FROM chunks WHERE tenant_id = '" + tenant + "'");
  }

  private static double single(Statement s, String sql) throws Exception {
    try (ResultSet rs = s.executeQuery(sql)) {
      assertThat(rs.next()).isTrue();
      return rs.getDouble(1);
    }
  }
}
