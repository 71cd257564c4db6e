package dev.quarry.ingest;

import static dev.quarry.ingest.IngestFixture.await;
import static dev.quarry.ingest.IngestFixture.embedder;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.quarry.ingest.Reembedder.Status;
import dev.quarry.search.SearchService;
import dev.quarry.store.DocumentsFs;
import dev.quarry.support.TestDatabase;
import dev.quarry.support.TestStack;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tables embedded with their figures (context version 1) are embedded again without them by the
 * Reembedder; chunks whose embedded text is the same either way keep their vectors.
 */
@DisplayName("Tables embedded with their figures are embedded again without them; other chunks are left alone")
class TableTextReindexTest {
  @AutoClose
  private static final TestStack stack = TestStack.start();
  private static final TestDatabase db = stack.db();
  private static final Vertx vertx = stack.vertx();
  private static final Pool pool = stack.pool();
  @TempDir static Path fsRoot;

  private static final String REPORT = """
      # Consolidated statements of income

      | | 2022 | 2021 |
      |---|---|---|
      | Total revenue | $ 17,606 | $ 15,785 |
      | Operating income | 6,098 | 5,802 |

      # Outlook

      Management expects revenue to keep growing as subscriptions renew.
      """;

  private record Stored(String context, int version, String content, String vector) {}

  private static Map<UUID, Stored> chunks(Connection c) throws Exception {
    Map<UUID, Stored> out = new HashMap<>();
    try (PreparedStatement s = c.prepareStatement("SELECT id, context, context_version, content, embedding::text FROM chunks");
        ResultSet rs = s.executeQuery()) {
      while (rs.next()) {
        out.put(rs.getObject(1, UUID.class), new Stored(rs.getString(2), rs.getInt(3), rs.getString(4), rs.getString(5)));
      }
    }
    return out;
  }

  @BeforeAll
  static void ingest() throws Exception {
    IngestService ingest = new IngestService(vertx, pool, embedder(), new DocumentsFs(vertx, pool, fsRoot), db.config());
    db.prepare(vertx, new SearchService(vertx, pool, embedder(), db.config()));
    await(ingest.ingest(IngestFixture.newTenant(db), IngestFixture.text("acme_2022.md", null, REPORT)));
  }

  @Test
  @DisplayName("after the run the table's vector is its figure-free text's, the prose's vector is untouched")
  void tablesEmbeddedAgain() throws Exception {
    try (Connection c = db.jdbc()) {
      Map<UUID, Stored> fresh = chunks(c);
      UUID table = fresh.entrySet().stream().filter(e -> e.getValue().content().contains("| Operating income |"))
          .findFirst().orElseThrow().getKey();
      UUID prose = fresh.entrySet().stream().filter(e -> e.getValue().content().contains("subscriptions renew"))
          .findFirst().orElseThrow().getKey();
      // Ingest embeds the table without its figures.
      assertClose(fresh.get(table).vector(), Chunk.embeddedText(fresh.get(table).context(), fresh.get(table).content()));

      // As version 1 left them: the same context, every chunk embedded with its figures.
      try (PreparedStatement s = c.prepareStatement(
          "UPDATE chunks SET context_version = 1, embedding = ?::vector WHERE id = ?")) {
        for (Map.Entry<UUID, Stored> e : fresh.entrySet()) {
          String text = Chunk.embeddedTextWithFigures(e.getValue().context(), e.getValue().content());
          s.setString(1, IngestService.vectorLiteral(embedder().embedPassages(List.of(text)).get(0)));
          s.setObject(2, e.getKey());
          s.executeUpdate();
        }
      }
      Map<UUID, Stored> aged = chunks(c);
      assertThat(aged.get(table).vector()).isNotEqualTo(fresh.get(table).vector());

      Status status = new Reembedder(vertx, pool, embedder()).run().await();

      assertThat(status.state()).isEqualTo(Status.State.DONE);
      assertThat(status.total()).isEqualTo(fresh.size());
      Map<UUID, Stored> after = chunks(c);
      assertThat(after.values()).allSatisfy(s -> assertThat(s.version()).isEqualTo(Chunk.CONTEXT_VERSION));
      assertClose(after.get(table).vector(), Chunk.embeddedText(after.get(table).context(), after.get(table).content()));
      assertThat(after.get(prose).vector()).isEqualTo(aged.get(prose).vector());
    }
    assertThat(new Reembedder(vertx, pool, embedder()).run().await().total()).isZero();
  }

  private static void assertClose(String literal, String text) {
    float[] expected = embedder().embedPassages(List.of(text)).get(0);
    String[] parts = literal.substring(1, literal.length() - 1).split(",");
    assertThat(parts).hasSize(expected.length);
    for (int d = 0; d < expected.length; d++) {
      assertThat(Float.parseFloat(parts[d])).isCloseTo(expected[d], within(1e-5f));
    }
  }
}
