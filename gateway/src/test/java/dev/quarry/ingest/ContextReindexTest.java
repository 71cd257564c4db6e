package dev.quarry.ingest;

import static dev.quarry.ingest.IngestFixture.await;
import static dev.quarry.ingest.IngestFixture.embedder;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.quarry.ingest.Reembedder.Status;
import dev.quarry.search.RankedChunk;
import dev.quarry.search.SearchMode;
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
 * Chunks stored before their context knew the filing's company and period (context version 0, as
 * V12 marks every chunk it finds) are brought up to the current context by the Reembedder: the
 * same context a fresh ingest writes, embedded with it, and indexed by BM25 with it.
 */
@DisplayName("Chunks with an older context are re-indexed with the current one, never left mixed")
class ContextReindexTest {
  @AutoClose
  private static final TestStack stack = TestStack.start();
  private static final TestDatabase db = stack.db();
  private static final Vertx vertx = stack.vertx();
  private static final Pool pool = stack.pool();
  @TempDir static Path fsRoot;

  private static final String FILING = """
      # UNITED STATES SECURITIES AND EXCHANGE COMMISSION

      FORM 10-Q

      For the quarterly period ended September 30, 2024

      Initech Corporation

      (Exact name of registrant as specified in its charter)

      # Liquidity and capital resources

      Capital expenditures for the quarter were 212 million dollars, mostly for new data centres.
      """;
  private static final String NOTE = """
      # Field notes

      The heron of the northern marsh hunts at dusk and nests in reed beds.
      """;

  private record Stored(String context, int version, String content, String vector) {}

  private static Map<UUID, Stored> chunks(Connection c) throws Exception {
    Map<UUID, Stored> out = new HashMap<>();
    try (PreparedStatement s = c.prepareStatement(
        "SELECT id, context, context_version, content, embedding::text FROM chunks");
        ResultSet rs = s.executeQuery()) {
      while (rs.next()) {
        out.put(rs.getObject(1, UUID.class), new Stored(rs.getString(2), rs.getInt(3), rs.getString(4), rs.getString(5)));
      }
    }
    return out;
  }

  private static float[] parse(String literal) {
    String[] parts = literal.substring(1, literal.length() - 1).split(",");
    float[] v = new float[parts.length];
    for (int i = 0; i < parts.length; i++) {
      v[i] = Float.parseFloat(parts[i]);
    }
    return v;
  }

  private static UUID tenant;
  private static UUID filing;
  private static SearchService search;

  @BeforeAll
  static void ingestThenAgeTheChunks() throws Exception {
    IngestService ingest = new IngestService(vertx, pool, embedder(), new DocumentsFs(vertx, pool, fsRoot), db.config());
    search = new SearchService(vertx, pool, embedder(), db.config());
    db.prepare(vertx, search);
    tenant = IngestFixture.newTenant(db);
    filing = await(ingest.ingest(tenant, IngestFixture.text("q3_report.md", null, FILING))).documentId();
    await(ingest.ingest(tenant, IngestFixture.text("notes.md", null, NOTE)));
  }

  @Test
  @DisplayName("after the run every chunk has the context, vector and terms a fresh ingest gives it")
  void reindexed() throws Exception {
    try (Connection c = db.jdbc()) {
      Map<UUID, Stored> fresh = chunks(c);
      assertThat(fresh.values()).allSatisfy(s -> assertThat(s.version()).isEqualTo(Chunk.CONTEXT_VERSION));
      assertThat(fresh.values()).anySatisfy(s -> assertThat(s.context())
          .isEqualTo("UNITED STATES SECURITIES AND EXCHANGE COMMISSION | q3 report | Initech Corporation | Form 10-Q | quarterly period ended September 30, 2024"));

      // As V10 left them: title and file name only, embedded with that, and context version 0.
      try (PreparedStatement s = c.prepareStatement(
          "UPDATE chunks SET context = ?, context_version = 0, embedding = ?::vector WHERE id = ?")) {
        for (Map.Entry<UUID, Stored> e : fresh.entrySet()) {
          String old = e.getValue().context().replaceAll(" \\| Initech.*", "");
          String text = Chunk.embeddedText(old, e.getValue().content());
          s.setString(1, old);
          s.setString(2, IngestService.vectorLiteral(embedder().embedPassages(List.of(text)).get(0)));
          s.setObject(3, e.getKey());
          s.executeUpdate();
        }
      }
      Map<UUID, Stored> aged = chunks(c);
      UUID capex = aged.entrySet().stream().filter(e -> e.getValue().content().contains("Capital expenditures"))
          .findFirst().orElseThrow().getKey();
      assertThat(ids(await(search.rank(tenant, "Initech", SearchMode.FULL_TEXT, 10)))).doesNotContain(capex);

      Status status = new Reembedder(vertx, pool, embedder()).run().await();

      assertThat(status.state()).isEqualTo(Status.State.DONE);
      assertThat(status.total()).isEqualTo(fresh.size());
      Map<UUID, Stored> after = chunks(c);
      for (Map.Entry<UUID, Stored> e : after.entrySet()) {
        Stored now = e.getValue();
        Stored was = fresh.get(e.getKey());
        assertThat(now.version()).isEqualTo(Chunk.CONTEXT_VERSION);
        assertThat(now.context()).isEqualTo(was.context());
        assertThat(now.content()).isEqualTo(was.content());
        if (aged.get(e.getKey()).context().equals(now.context())) {
          // nothing in its text changed: its vector is left as it was, not computed again
          assertThat(now.vector()).isEqualTo(aged.get(e.getKey()).vector());
        } else {
          float[] expected = embedder().embedPassages(List.of(Chunk.embeddedText(now.context(), now.content()))).get(0);
          float[] got = parse(now.vector());
          for (int d = 0; d < expected.length; d++) {
            assertThat(got[d]).isCloseTo(expected[d], within(1e-5f));
          }
        }
      }
      assertThat(after.get(capex).context()).contains("Initech Corporation");
      // BM25 indexed the new context: the company now finds the chunk that never names it.
      List<RankedChunk> byCompany = await(search.rank(tenant, "Initech", SearchMode.FULL_TEXT, 10));
      assertThat(ids(byCompany)).contains(capex);
      assertThat(byCompany).allSatisfy(r -> assertThat(r.documentId()).isEqualTo(filing));
    }
    // A second run finds nothing left to do.
    assertThat(new Reembedder(vertx, pool, embedder()).run().await().total()).isZero();
  }

  private static List<UUID> ids(List<RankedChunk> ranked) {
    return ranked.stream().map(RankedChunk::chunkId).toList();
  }
}
