package dev.quarry.ingest;

import static dev.quarry.ingest.IngestFixture.await;
import static dev.quarry.ingest.IngestFixture.newTenant;
import static dev.quarry.ingest.IngestFixture.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.ingest.IngestResult.Status;
import dev.quarry.search.Embedder;
import dev.quarry.support.TestDatabase;
import dev.quarry.support.TestStack;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The BM25 statistics written by the statement-level trigger (V5) for a document's chunks inserted
 * in one statement are exactly what V2's per-chunk trigger wrote: recomputed here per chunk from
 * to_tsvector with V2's own expressions and compared row for row.
 */
@DisplayName("Ingest keeps BM25 statistics exact")
class IngestBm25StatsTest {
  @AutoClose
  private static final TestStack stack = TestStack.start();
  private static final TestDatabase db = stack.db();
  private static final Vertx vertx = stack.vertx();
  private static final Pool pool = stack.pool();

  /** Vectors do not matter here; a constant unit vector keeps the test off the model. */
  private static final Embedder CONSTANT = new Embedder() {
    @Override public String modelName() { return "constant"; }
    @Override public int dimensions() { return 3; }
    @Override public List<float[]> embedPassages(List<String> texts) {
      List<float[]> out = new ArrayList<>();
      texts.forEach(t -> out.add(new float[] {1, 0, 0}));
      return out;
    }
    @Override public float[] embedQuery(String query) { return new float[] {1, 0, 0}; }
  };

  private static String report(int sections, String word) {
    StringBuilder md = new StringBuilder("# Report on ").append(word).append("\n\n");
    for (int s = 0; s < sections; s++) {
      md.append("## Section ").append(s).append(" about ").append(word).append("\n\n");
      md.append(("The " + word + " boundary layers were measured " + s + " times; flows flowing"
          + " faster than sound separate. ").repeat(40 + s)).append("\n\n");
    }
    return md.toString();
  }

  @Test
  @DisplayName("chunk_terms, token_count and corpus_stats match a per-chunk recomputation after insert, replace, update and delete")
  void statisticsMatchPerChunkRecomputation() throws Exception {
    UUID tenant = newTenant(db);
    UUID other = newTenant(db);
    IngestService ingest = new IngestService(vertx, pool, CONSTANT, null, db.config());

    IngestResult first = await(ingest.ingest(tenant, text("a.md", "docs/a.md", report(5, "supersonic"))));
    await(ingest.ingest(tenant, text("b.md", "docs/b.md", report(3, "hypersonic"))));
    await(ingest.ingest(other, text("c.md", "docs/c.md", report(4, "laminar"))));
    assertThat(first.chunkCount()).isGreaterThan(3);
    assertStatisticsExact();

    IngestResult replaced = await(ingest.ingest(tenant, text("a.md", "docs/a.md", report(6, "turbulent"))));
    assertThat(replaced.status()).isEqualTo(Status.REPLACED);
    assertStatisticsExact();

    try (Connection c = db.jdbc(); PreparedStatement s = c.prepareStatement(
        "UPDATE chunks SET content = content || ' shock waves interacting' WHERE document_id = ? AND ordinal < 2")) {
      s.setObject(1, replaced.documentId());
      assertThat(s.executeUpdate()).isEqualTo(2);
    }
    assertStatisticsExact();

    try (Connection c = db.jdbc(); PreparedStatement s = c.prepareStatement(
        "DELETE FROM documents WHERE id = ?")) {
      s.setObject(1, replaced.documentId());
      s.executeUpdate();
    }
    assertStatisticsExact();
  }

  private static void assertStatisticsExact() throws SQLException {
    assertThat(scalar("SELECT count(*) FROM chunks")).isPositive();
    // token_count as V2's BEFORE trigger defines it, over the document's name and the content (V10).
    assertThat(scalar("SELECT count(*) FROM chunks WHERE token_count <> coalesce((SELECT"
        + " sum(cardinality(positions)) FROM unnest(to_tsvector('english', context || ' ' || content))), 0)"))
        .isZero();
    // chunk_terms as V2's per-chunk trigger wrote it, compared both ways.
    String expected = "SELECT c.tenant_id, t.lexeme, c.id, c.document_id, cardinality(t.positions),"
        + " c.token_count FROM chunks c, unnest(to_tsvector('english', c.context || ' ' || c.content)) AS t";
    String actual = "SELECT tenant_id, term, chunk_id, document_id, tf, token_count FROM chunk_terms";
    assertThat(scalar("SELECT count(*) FROM (" + expected + " EXCEPT ALL " + actual + ") d")).isZero();
    assertThat(scalar("SELECT count(*) FROM (" + actual + " EXCEPT ALL " + expected + ") d")).isZero();
    assertThat(scalar("SELECT count(*) FROM chunk_terms")).isPositive();
    // corpus_stats: N and the total length per tenant (a tenant with no chunks left keeps 0, 0).
    assertThat(scalar("SELECT count(*) FROM corpus_stats s FULL JOIN (SELECT tenant_id, count(*) n,"
        + " sum(token_count) tokens FROM chunks GROUP BY tenant_id) c ON c.tenant_id = s.tenant_id"
        + " WHERE coalesce(c.n, 0) <> coalesce(s.chunk_count, 0)"
        + " OR coalesce(c.tokens, 0) <> coalesce(s.total_tokens, 0)")).isZero();
  }

  private static long scalar(String sql) throws SQLException {
    try (Connection c = db.jdbc(); PreparedStatement s = c.prepareStatement(sql);
        ResultSet r = s.executeQuery()) {
      r.next();
      return r.getLong(1);
    }
  }
}
