package dev.quarry.ingest;

import static dev.quarry.ingest.IngestFixture.await;
import static dev.quarry.ingest.IngestFixture.count;
import static dev.quarry.ingest.IngestFixture.embedder;
import static dev.quarry.ingest.IngestFixture.newTenant;
import static dev.quarry.ingest.IngestFixture.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quarry.ingest.IngestFixture.Instrumented;
import dev.quarry.ingest.IngestResult.Status;
import dev.quarry.search.Embedder;
import dev.quarry.store.DocumentsFs;
import dev.quarry.support.SharedData;
import dev.quarry.support.TestDatabase;
import dev.quarry.support.TestStack;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayName("IngestService")
class IngestServiceTest {
  @AutoClose
  private static final TestStack stack = TestStack.start();
  private static final TestDatabase db = stack.db();
  private static final Vertx vertx = stack.vertx();
  private static final Pool pool = stack.pool();
  @TempDir static Path fsRoot;
  private static DocumentsFs fs;

  private static final String MARKDOWN = """
      # Annual report

      ## Revenue

      Revenue grew by 12 percent to 4.2 million euros, driven by subscriptions.

      | Year | Revenue |
      |------|---------|
      | 2022 | 3.75 |
      | 2023 | 4.2 |

      ## Costs

      Costs fell because the data centre moved to a cheaper region.
      """;

  @BeforeAll
  static void start() {
    fs = new DocumentsFs(vertx, pool, fsRoot);
  }

  private static IngestService service(Embedder embedder) {
    return new IngestService(vertx, pool, embedder, fs, db.config());
  }

  private static IngestRequest markdown(String uri, String body) {
    return new IngestRequest("report.md", uri, null, null, body.getBytes(java.nio.charset.StandardCharsets.UTF_8));
  }

  private static List<String> column(String sql, Object... args) throws Exception {
    try (Connection c = db.jdbc(); PreparedStatement s = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        s.setObject(i + 1, args[i]);
      }
      List<String> out = new ArrayList<>();
      try (ResultSet r = s.executeQuery()) {
        while (r.next()) {
          out.add(r.getString(1));
        }
      }
      return out;
    }
  }

  @Test
  @DisplayName("creates a document with its items, section ranges, toc and 384-dim embedded chunks")
  void creates() throws Exception {
    UUID tenant = newTenant(db);
    IngestResult r = await(service(embedder()).ingest(tenant, markdown("s3://b/report.md", MARKDOWN)));

    assertThat(r.status()).isEqualTo(Status.CREATED);
    assertThat(r.sourceType()).isEqualTo("markdown");
    assertThat(count(db, "documents", tenant)).isEqualTo(1);
    assertThat(count(db, "items", tenant)).isEqualTo(r.itemCount());
    assertThat(count(db, "chunks", tenant)).isEqualTo(r.chunkCount()).isGreaterThanOrEqualTo(3);
    assertThat(column("SELECT DISTINCT vector_dims(embedding)::text FROM chunks WHERE document_id = ?",
        r.documentId())).containsExactly("384");
    assertThat(column("SELECT DISTINCT embedding_model FROM chunks WHERE document_id = ?", r.documentId()))
        .containsExactly(dev.quarry.search.OnnxEmbedder.DEFAULT);
    JsonObject toc = new JsonObject(column("SELECT toc::text FROM documents WHERE id = ?", r.documentId()).get(0));
    assertThat(toc.getString("doc_id")).isEqualTo(r.documentId().toString());
    assertThat(toc.getJsonArray("tree")).isNotEmpty();
    // the table item sits in the "Revenue" section: its section range starts at that header
    List<String> tableSection = column("SELECT i.section_start || '-' || h.text FROM items i JOIN items h"
        + " ON h.document_id = i.document_id AND h.position = i.section_start"
        + " WHERE i.document_id = ? AND i.label = 'table'", r.documentId());
    assertThat(tableSection).singleElement().asString().endsWith("-Revenue");
    assertThat(column("SELECT version::text FROM documents WHERE id = ?", r.documentId())).containsExactly("1");
    // synced to the documents filesystem after the commit
    assertThat(fs.tenantDir(tenant).resolve(r.documentId().toString()).resolve("items.jsonl")).isRegularFile();
  }

  @Test
  @DisplayName("the same bytes again under the same uri are UNCHANGED: same id, nothing written")
  void unchanged() throws Exception {
    UUID tenant = newTenant(db);
    IngestService service = service(embedder());
    IngestResult first = await(service.ingest(tenant, markdown("a.md", MARKDOWN)));
    long items = count(db, "items", tenant);
    long chunks = count(db, "chunks", tenant);
    List<String> updated = column("SELECT updated_at::text FROM documents WHERE id = ?", first.documentId());

    IngestResult again = await(service.ingest(tenant, markdown("a.md", MARKDOWN)));

    assertThat(again.status()).isEqualTo(Status.UNCHANGED);
    assertThat(again.documentId()).isEqualTo(first.documentId());
    assertThat(again.chunkCount()).isEqualTo(first.chunkCount());
    assertThat(count(db, "documents", tenant)).isEqualTo(1);
    assertThat(count(db, "items", tenant)).isEqualTo(items);
    assertThat(count(db, "chunks", tenant)).isEqualTo(chunks);
    assertThat(column("SELECT updated_at::text FROM documents WHERE id = ?", first.documentId()))
        .isEqualTo(updated);
  }

  @Test
  @DisplayName("the uri decides the document (red team R6-4): another uri's bytes under a new uri are a"
      + " new document, and a known uri's new version equal to another's bytes REPLACES it")
  void uriDecidesNotBytes() throws Exception {
    UUID tenant = newTenant(db);
    IngestService service = service(embedder());
    String draft = "# Draft\n\nRevenue unknown, to be filled in.\n";
    IngestResult a = await(service.ingest(tenant, markdown("reports/a", MARKDOWN)));
    IngestResult b = await(service.ingest(tenant, markdown("reports/b", draft)));

    // B's next version happens to be A's bytes: B is replaced, A is left as it was.
    IngestResult b2 = await(service.ingest(tenant, markdown("reports/b", MARKDOWN)));
    assertThat(b2.status()).isEqualTo(Status.REPLACED);
    assertThat(b2.documentId()).isEqualTo(b.documentId()).isNotEqualTo(a.documentId());
    assertThat(column("SELECT version || ' ' || (content LIKE '%Revenue grew%') FROM documents WHERE id = ?",
        b.documentId())).containsExactly("2 true");
    assertThat(column("SELECT count(*)::text FROM chunks WHERE document_id = ? AND content LIKE '%to be filled in%'",
        b.documentId())).containsExactly("0");
    assertThat(column("SELECT version::text FROM documents WHERE id = ?", a.documentId())).containsExactly("1");

    // A uri not seen before with A's bytes: a document of its own, with its chunks.
    IngestResult c = await(service.ingest(tenant, markdown("reports/c", MARKDOWN)));
    assertThat(c.status()).isEqualTo(Status.CREATED);
    assertThat(c.documentId()).isNotIn(a.documentId(), b.documentId());
    assertThat(count(db, "documents", tenant)).isEqualTo(3);
    assertThat(column("SELECT count(*)::text FROM chunks WHERE document_id = ?", c.documentId()))
        .containsExactly(String.valueOf(a.chunkCount()));

    // Deleting A leaves B and C whole.
    try (Connection conn = db.jdbc(); PreparedStatement del = conn.prepareStatement("DELETE FROM documents WHERE id = ?")) {
      del.setObject(1, a.documentId());
      del.executeUpdate();
    }
    assertThat(column("SELECT uri FROM documents WHERE tenant_id = ? AND content LIKE '%Revenue grew%' ORDER BY uri",
        tenant)).containsExactly("reports/b", "reports/c");
  }

  @Test
  @DisplayName("other bytes under a known uri REPLACE it: same id, version 2, new content, old chunks gone")
  void replaces() throws Exception {
    UUID tenant = newTenant(db);
    IngestService service = service(embedder());
    IngestResult first = await(service.ingest(tenant, markdown("docs/report.md", MARKDOWN)));
    Set<String> oldChunks = new HashSet<>(column("SELECT id::text FROM chunks WHERE document_id = ?", first.documentId()));

    String changed = MARKDOWN.replace("12 percent", "15 percent") + "\n## Outlook\n\nFlat.\n";
    IngestResult second = await(service.ingest(tenant, markdown("docs/report.md", changed)));

    assertThat(second.status()).isEqualTo(Status.REPLACED);
    assertThat(second.documentId()).isEqualTo(first.documentId());
    assertThat(count(db, "documents", tenant)).isEqualTo(1);
    assertThat(column("SELECT version::text FROM documents WHERE id = ?", first.documentId())).containsExactly("2");
    assertThat(column("SELECT content FROM documents WHERE id = ?", first.documentId()).get(0))
        .contains("15 percent").doesNotContain("12 percent");
    Set<String> newChunks = new HashSet<>(column("SELECT id::text FROM chunks WHERE document_id = ?", first.documentId()));
    assertThat(newChunks).hasSize(second.chunkCount()).doesNotContainAnyElementsOf(oldChunks);
    assertThat(count(db, "items", tenant)).isEqualTo(second.itemCount());
    assertThat(column("SELECT count(*)::text FROM chunks WHERE document_id = ? AND content LIKE '%12 percent%'",
        first.documentId())).containsExactly("0");
    assertThat(Files.readString(fs.tenantDir(tenant).resolve(first.documentId().toString()).resolve("content.txt")))
        .contains("15 percent");
  }

  @Test
  @DisplayName("a failure inside the transaction (a vector PostgreSQL rejects) leaves nothing behind")
  void failureMidInsertLeavesNothing() throws Exception {
    UUID tenant = newTenant(db);
    // The last vector of the last batch is NaN: documents and items are inserted, then the chunk
    // insert fails, so only a rollback can explain an empty database afterwards.
    Instrumented nanLast = new Instrumented(embedder(), out -> {
      out.get(out.size() - 1)[0] = Float.NaN;
      return out;
    });
    assertThatThrownBy(() -> await(service(nanLast).ingest(tenant, markdown("x.md", MARKDOWN))))
        .isInstanceOf(PgException.class).hasMessageContaining("NaN");
    assertThat(count(db, "documents", tenant)).isZero();
    assertThat(count(db, "items", tenant)).isZero();
    assertThat(count(db, "chunks", tenant)).isZero();
  }

  @Test
  @DisplayName("a failed replacement keeps the old version whole")
  void failedReplaceKeepsOld() throws Exception {
    UUID tenant = newTenant(db);
    IngestResult first = await(service(embedder()).ingest(tenant, markdown("r.md", MARKDOWN)));
    Set<String> chunks = new HashSet<>(column("SELECT id::text FROM chunks WHERE tenant_id = ?", tenant));
    Instrumented nanLast = new Instrumented(embedder(), out -> {
      out.get(out.size() - 1)[0] = Float.NaN;
      return out;
    });
    assertThatThrownBy(() -> await(service(nanLast).ingest(tenant, markdown("r.md", MARKDOWN + "\nMore.\n"))))
        .isInstanceOf(PgException.class);
    assertThat(column("SELECT version::text FROM documents WHERE id = ?", first.documentId())).containsExactly("1");
    assertThat(new HashSet<>(column("SELECT id::text FROM chunks WHERE tenant_id = ?", tenant))).isEqualTo(chunks);
    assertThat(count(db, "items", tenant)).isEqualTo(first.itemCount());
  }

  @Test
  @DisplayName("an embedder failure fails the ingest and writes nothing")
  void embedderFailure() throws Exception {
    UUID tenant = newTenant(db);
    Instrumented broken = new Instrumented(embedder(), out -> {
      throw new IllegalStateException("embedding backend down");
    });
    assertThatThrownBy(() -> await(service(broken).ingest(tenant, markdown("y.md", MARKDOWN))))
        .hasMessageContaining("embedding backend down");
    Instrumented short1 = new Instrumented(embedder(), out -> out.subList(0, out.size() - 1));
    assertThatThrownBy(() -> await(service(short1).ingest(tenant, markdown("y.md", MARKDOWN))))
        .hasMessageContaining("vectors for");
    assertThat(count(db, "documents", tenant)).isZero();
  }

  @Test
  @DisplayName("bad input fails with an IngestException naming file and reason; nothing is stored")
  void badInput() throws Exception {
    UUID tenant = newTenant(db);
    assertThatThrownBy(() -> await(service(embedder()).ingest(tenant,
        new IngestRequest("nothing.txt", "u", null, null, new byte[0]))))
        .isInstanceOfSatisfying(IngestException.class, e -> assertThat(e.reason()).isEqualTo(IngestException.Reason.EMPTY))
        .hasMessageStartingWith("nothing.txt: ");
    assertThatThrownBy(() -> await(service(embedder()).ingest(tenant,
        new IngestRequest("latin.txt", "u", null, null, new byte[] {'c', 'a', 'f', (byte) 0xE9}))))
        .isInstanceOfSatisfying(IngestException.class,
            e -> assertThat(e.reason()).isEqualTo(IngestException.Reason.INVALID_ENCODING));
    assertThat(count(db, "documents", tenant)).isZero();
  }

  @Test
  @DisplayName("a PDF's glyphs without a character are counted in the ingest result, in all and by page")
  void undecodableGlyphsByPage() throws Exception {
    UUID tenant = newTenant(db);
    IngestResult r = await(service(embedder()).ingest(tenant, new IngestRequest("unmapped.pdf", "u",
        null, null, PdfConverterTest.pdfWithUnmappedGlyphs())));
    assertThat(r.undecodableChars()).isEqualTo(5);
    assertThat(r.undecodablePages()).isEqualTo(java.util.Map.of(2, 5));
    assertThat(column("SELECT text FROM items WHERE document_id = ? ORDER BY position", r.documentId()))
        .allSatisfy(t -> assertThat(t.codePoints().filter(TextHygiene::undecodable)).isEmpty());
  }

  @Test
  @DisplayName("undecodable characters are dropped and counted, never stored; a file with no text is refused")
  void textHygiene() throws Exception {
    UUID tenant = newTenant(db);
    IngestResult r = await(service(embedder()).ingest(tenant, markdown("garbled.md",
        "# Costs\u0001\n\nCosts fell \uFFFD\uFFFD by \uE012\uE013 a third.\n\n\u0002\u0003\n")));
    assertThat(r.undecodableChars()).isEqualTo(7);
    assertThat(column("SELECT text FROM items WHERE document_id = ? ORDER BY position", r.documentId()))
        .containsExactly("Costs", "Costs fell by a third.");
    assertThat(column("SELECT content FROM chunks WHERE document_id = ?", r.documentId()))
        .allSatisfy(c -> assertThat(c.codePoints().filter(TextHygiene::undecodable)).isEmpty());
    assertThatThrownBy(() -> await(service(embedder()).ingest(tenant,
        new IngestRequest("pictures.html", "p", null, null,
            "<html><body><img src=a.png><img src=b.png></body></html>".getBytes(java.nio.charset.StandardCharsets.UTF_8)))))
        .isInstanceOfSatisfying(IngestException.class,
            e -> assertThat(e.reason()).isEqualTo(IngestException.Reason.NO_TEXT_EXTRACTED))
        .hasMessageStartingWith("pictures.html: yields no text: found 2 picture(s)");
    assertThatThrownBy(() -> await(service(embedder()).ingest(tenant,
        new IngestRequest("blank.html", "b", null, null,
            "<html><body> <div></div> </body></html>".getBytes(java.nio.charset.StandardCharsets.UTF_8)))))
        .isInstanceOfSatisfying(IngestException.class,
            e -> assertThat(e.reason()).isEqualTo(IngestException.Reason.EMPTY));
    assertThat(count(db, "documents", tenant)).isEqualTo(1);
  }

  @Test
  @DisplayName("concurrent ingests of one uri with the same bytes make one document; the others are UNCHANGED")
  void concurrentSameBytes() throws Exception {
    UUID tenant = newTenant(db);
    IngestService service = service(embedder());
    List<Future<IngestResult>> all = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      all.add(service.ingest(tenant, markdown("copy.md", MARKDOWN)));
    }
    await(Future.all(all));
    Set<UUID> ids = new HashSet<>();
    List<Status> statuses = new ArrayList<>();
    for (Future<IngestResult> f : all) {
      ids.add(f.result().documentId());
      statuses.add(f.result().status());
    }
    assertThat(ids).hasSize(1);
    assertThat(statuses).containsOnlyOnce(Status.CREATED).containsOnly(Status.CREATED, Status.UNCHANGED);
    assertThat(count(db, "documents", tenant)).isEqualTo(1);
    assertThat(count(db, "chunks", tenant)).isEqualTo(all.get(0).result().chunkCount());
  }

  @Test
  @DisplayName("concurrent ingests of the same bytes under four uris make four documents")
  void concurrentSameBytesTwoUris() throws Exception {
    UUID tenant = newTenant(db);
    IngestService service = service(embedder());
    List<Future<IngestResult>> all = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      all.add(service.ingest(tenant, markdown("copy-" + i + ".md", MARKDOWN)));
    }
    await(Future.all(all));
    Set<UUID> ids = new HashSet<>();
    for (Future<IngestResult> f : all) {
      assertThat(f.result().status()).isEqualTo(Status.CREATED);
      ids.add(f.result().documentId());
    }
    assertThat(ids).hasSize(4);
    assertThat(count(db, "documents", tenant)).isEqualTo(4);
    assertThat(count(db, "chunks", tenant)).isEqualTo(4L * all.get(0).result().chunkCount());
  }

  @Test
  @DisplayName("concurrent ingests of one uri with different bytes: one document, created then replaced")
  void concurrentSameUri() throws Exception {
    UUID tenant = newTenant(db);
    IngestService service = service(embedder());
    Future<IngestResult> a = service.ingest(tenant, markdown("same.md", MARKDOWN));
    Future<IngestResult> b = service.ingest(tenant, markdown("same.md", MARKDOWN + "\nExtra line.\n"));
    await(Future.all(a, b));
    assertThat(a.result().documentId()).isEqualTo(b.result().documentId());
    assertThat(List.of(a.result().status(), b.result().status()))
        .containsExactlyInAnyOrder(Status.CREATED, Status.REPLACED);
    assertThat(count(db, "documents", tenant)).isEqualTo(1);
    assertThat(column("SELECT version::text FROM documents WHERE tenant_id = ?", tenant)).containsExactly("2");
  }

  @Test
  @DisplayName("a real DoclingDocument ingests with its tables, pages and sections")
  void realDocling() throws Exception {
    UUID tenant = newTenant(db);
    byte[] bytes = Files.readAllBytes(SharedData.path("docling/docling-json/2206.01062.json"));
    IngestResult r = await(service(embedder()).ingest(tenant,
        new IngestRequest("2206.01062.json", "papers/2206.01062", null, "application/json", bytes)));
    assertThat(r.sourceType()).isEqualTo("docling");
    assertThat(column("SELECT count(*)::text FROM chunks WHERE document_id = ? AND 'table' = ANY(labels)",
        r.documentId()).get(0)).isNotEqualTo("0");
    assertThat(column("SELECT max(page_numbers[1])::text FROM items WHERE document_id = ?", r.documentId()))
        .containsExactly("9");
  }
}
