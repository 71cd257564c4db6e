package dev.quarry.store;

import static dev.quarry.ingest.IngestFixture.await;
import static dev.quarry.ingest.IngestFixture.count;
import static dev.quarry.ingest.IngestFixture.embedder;
import static dev.quarry.ingest.IngestFixture.newTenant;
import static dev.quarry.ingest.IngestFixture.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.store.DocItem;
import dev.quarry.ingest.IngestResult;
import dev.quarry.ingest.IngestService;
import dev.quarry.support.TestDatabase;
import dev.quarry.support.TestStack;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayName("DocumentStore")
class DocumentStoreTest {
  @AutoClose
  private static final TestStack stack = TestStack.start();
  private static final TestDatabase db = stack.db();
  private static final Vertx vertx = stack.vertx();
  private static final Pool pool = stack.pool();
  private static IngestService ingest;
  private static DocumentsFs fs;
  @TempDir static Path root;

  @BeforeAll
  static void start() {
    fs = new DocumentsFs(vertx, pool, root);
    ingest = new IngestService(vertx, pool, embedder(), fs, db.config());
  }

  /** A document's file as the API serves it ({@link DocumentsFs#open}), read whole; empty when there is none. */
  private static java.util.Optional<String> read(UUID tenant, UUID id, String file) throws Exception {
    var opened = await(fs.open(tenant, id, file));
    if (opened.isEmpty()) {
      return java.util.Optional.empty();
    }
    var f = opened.get().file();
    io.vertx.core.buffer.Buffer all = io.vertx.core.buffer.Buffer.buffer();
    io.vertx.core.Promise<Void> read = io.vertx.core.Promise.promise();
    f.exceptionHandler(read::tryFail);
    f.endHandler(v -> read.tryComplete());
    f.handler(all::appendBuffer);
    await(read.future().eventually(f::close));
    return java.util.Optional.of(all.toString(java.nio.charset.StandardCharsets.UTF_8));
  }

  @Test
  @DisplayName("lists, gets and reads a tenant's documents, oldest first")
  void reads() throws Exception {
    UUID tenant = newTenant(db);
    DocumentStore store = new DocumentStore(pool);
    IngestResult a = await(ingest.ingest(tenant, text("a.txt", "uri:a", "Alpha doc\n\nFirst paragraph.")));
    IngestResult b = await(ingest.ingest(tenant, text("b.txt", "uri:b", "Beta doc\n\nSecond.\n\nThird.")));

    List<DocumentSummary> list = await(store.list(tenant));
    assertThat(list).extracting(DocumentSummary::id).containsExactly(a.documentId(), b.documentId());
    DocumentSummary sb = await(store.get(tenant, b.documentId())).orElseThrow();
    assertThat(sb.title()).isEqualTo("Beta doc");
    assertThat(sb.uri()).isEqualTo("uri:b");
    assertThat(sb.sourceType()).isEqualTo("text");
    assertThat(sb.itemCount()).isEqualTo(3);
    assertThat(sb.version()).isEqualTo(1);
    assertThat(sb.contentHash()).hasSize(64);

    List<String> items = read(tenant, b.documentId(), "items.jsonl").orElseThrow().lines().toList();
    assertThat(items).extracting(line -> new io.vertx.core.json.JsonObject(line).getString("text"))
        .containsExactly("Beta doc", "Second.", "Third.");
    assertThat(read(tenant, b.documentId(), "content.txt")).contains("Beta doc\n\nSecond.\n\nThird.");
    assertThat(new io.vertx.core.json.JsonObject(read(tenant, b.documentId(), "toc.json").orElseThrow())
        .getJsonArray("tree")).isEmpty();
  }

  @Test
  @DisplayName("another tenant's documents are invisible: not listed, not readable, not deletable")
  void tenantIsolation() throws Exception {
    UUID owner = newTenant(db);
    UUID other = newTenant(db);
    DocumentStore store = new DocumentStore(pool);
    IngestResult doc = await(ingest.ingest(owner, text("secret.txt", "uri:secret", "Secret\n\nPlans.")));
    UUID id = doc.documentId();

    assertThat(await(store.list(other))).isEmpty();
    assertThat(await(store.get(other, id))).isEmpty();
    for (String file : DocumentsFs.FILES) {
      assertThat(await(fs.open(other, id, file))).as(file).isEmpty();
    }
    assertThat(await(store.delete(other, id))).isFalse();
    assertThat(await(store.get(owner, id))).isPresent();
  }

  @Test
  @DisplayName("delete removes the document, its items and chunks, and its /documents directory")
  void deletes() throws Exception {
    UUID tenant = newTenant(db);
    DocumentStore store = new DocumentStore(pool, fs);
    IngestResult doc = await(ingest.ingest(tenant, text("gone.txt", "uri:gone", "Gone\n\nSoon.")));
    Path dir = fs.tenantDir(tenant).resolve(doc.documentId().toString());
    assertThat(dir).isDirectory();

    assertThat(await(store.delete(tenant, doc.documentId()))).isTrue();

    assertThat(await(store.get(tenant, doc.documentId()))).isEmpty();
    assertThat(await(fs.open(tenant, doc.documentId(), "items.jsonl"))).isEmpty();
    assertThat(count(db, "items", tenant)).isZero();
    assertThat(count(db, "chunks", tenant)).isZero();
    assertThat(dir).doesNotExist();
    assertThat(await(store.delete(tenant, doc.documentId()))).isFalse();
  }
}
