package dev.quarry.store;

import static dev.quarry.ingest.IngestFixture.await;
import static dev.quarry.ingest.IngestFixture.embedder;
import static dev.quarry.ingest.IngestFixture.newTenant;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.ingest.IngestRequest;
import dev.quarry.ingest.IngestResult;
import dev.quarry.ingest.IngestService;
import dev.quarry.support.TestDatabase;
import dev.quarry.support.TestStack;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayName("DocumentsFs")
class DocumentsFsTest {
  @AutoClose
  private static final TestStack stack = TestStack.start();
  private static final TestDatabase db = stack.db();
  private static final Vertx vertx = stack.vertx();
  private static final Pool pool = stack.pool();
  private static IngestService ingest;
  @TempDir static Path root;
  private static DocumentsFs fs;

  private static final String MARKDOWN = """
      # Handbook

      ## Safety

      Wear goggles.

      | Tool | Risk |
      |---|---|
      | saw | high |

      ### Fire

      Call 112.

      ## Care

      Oil the hinges.
      """;

  @BeforeAll
  static void start() {
    fs = new DocumentsFs(vertx, pool, root);
    // No filesystem in the ingest service: these tests call sync themselves.
    ingest = new IngestService(vertx, pool, embedder(), null, db.config());
  }

  private static IngestResult add(UUID tenant, String name, String body) throws Exception {
    return await(ingest.ingest(tenant, new IngestRequest(name, "uri:" + name, null, null,
        body.getBytes(StandardCharsets.UTF_8))));
  }

  private static Map<Path, FileTime> mtimes(Path dir) throws Exception {
    Map<Path, FileTime> out = new HashMap<>();
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path p : walk.filter(Files::isRegularFile).toList()) {
        out.put(dir.relativize(p), Files.getLastModifiedTime(p));
      }
    }
    return out;
  }

  private static Map<String, String> files(Path dir) throws Exception {
    Map<String, String> out = new HashMap<>();
    for (String f : DocumentsFs.FILES) {
      out.put(f, Files.readString(dir.resolve(f)));
    }
    return out;
  }

  @Test
  @DisplayName("an ingest writes its document's files from what it stored, byte for byte what a"
      + " rebuild from the database writes, and leaves the others' files alone")
  void ingestWritesItsDocument() throws Exception {
    UUID tenant = newTenant(db);
    IngestService writing = new IngestService(vertx, pool, embedder(), fs, db.config());
    IngestResult first = await(writing.ingest(tenant, new IngestRequest("first.md", "uri:first.md",
        null, null, MARKDOWN.getBytes(StandardCharsets.UTF_8))));
    Path firstDir = fs.tenantDir(tenant).resolve(first.documentId().toString());
    Map<Path, FileTime> before = mtimes(firstDir);
    String text = MARKDOWN + "\nAlso oil the springs twice a year (\u00e9t\u00e9, \ud83d\udd27).\n";
    IngestResult second = await(writing.ingest(tenant, new IngestRequest("second.md", "uri:second.md",
        "Second handbook", null, text.getBytes(StandardCharsets.UTF_8))));
    Path dir = fs.tenantDir(tenant).resolve(second.documentId().toString());

    try (Stream<Path> files = Files.list(dir)) {
      assertThat(files.map(p -> p.getFileName().toString()).toList())
          .containsExactlyInAnyOrder("metadata.json", "content.txt", "items.jsonl", "toc.json");
    }
    assertThat(Files.readString(dir.resolve("content.txt"))).contains("Also oil the springs");
    assertThat(Files.readAllLines(dir.resolve("items.jsonl"))).hasSize(second.itemCount());
    assertThat(mtimes(firstDir)).isEqualTo(before);
    Map<String, String> fromIngest = files(dir);
    // The full sync afterwards finds the document up to date (its marker was recorded) ...
    Map<Path, FileTime> written = mtimes(dir);
    await(fs.sync(tenant));
    assertThat(mtimes(dir)).isEqualTo(written);
    // ... and rebuilt from the database, the files are the same bytes.
    deleteTree(fs.tenantDir(tenant));
    await(fs.sync(tenant));
    assertThat(files(dir)).isEqualTo(fromIngest);

    // A replacement too: its new version and title, as a rebuild writes them.
    await(writing.ingest(tenant, new IngestRequest("second.md", "uri:second.md", "Revised",
        null, (text + "\nAnd the locks.\n").getBytes(StandardCharsets.UTF_8))));
    Map<String, String> replaced = files(dir);
    assertThat(replaced.get("content.txt")).endsWith("And the locks.");
    assertThat(new JsonObject(replaced.get("metadata.json")).getString("title")).isEqualTo("Revised");
    deleteTree(fs.tenantDir(tenant));
    await(fs.sync(tenant));
    assertThat(files(dir)).isEqualTo(replaced);
  }

  private static void deleteTree(Path dir) throws Exception {
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }

  @Test
  @DisplayName("writes exactly the four CONTRACT files, which parse back to the database's content")
  void filesPerContract() throws Exception {
    UUID tenant = newTenant(db);
    IngestResult doc = add(tenant, "handbook.md", MARKDOWN);
    Path tenantDir = await(fs.sync(tenant));
    Path dir = tenantDir.resolve(doc.documentId().toString());

    try (Stream<Path> files = Files.list(tenantDir)) {
      assertThat(files.map(p -> p.getFileName().toString()).toList())
          .containsExactly(doc.documentId().toString());
    }
    try (Stream<Path> files = Files.list(dir)) {
      assertThat(files.map(p -> p.getFileName().toString()).toList())
          .containsExactlyInAnyOrder("metadata.json", "content.txt", "items.jsonl", "toc.json");
    }
    JsonObject meta = new JsonObject(Files.readString(dir.resolve("metadata.json")));
    assertThat(meta.fieldNames()).containsExactlyInAnyOrder("id", "title", "uri", "created_at");
    assertThat(meta.getString("id")).isEqualTo(doc.documentId().toString());
    assertThat(meta.getString("title")).isEqualTo("Handbook");
    assertThat(meta.getString("uri")).isEqualTo("uri:handbook.md");
    assertThat(Instant.parse(meta.getString("created_at"))).isBefore(Instant.now().plusSeconds(1));

    List<String> lines = Files.readAllLines(dir.resolve("items.jsonl"));
    assertThat(lines).hasSize(doc.itemCount());
    List<JsonObject> items = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      JsonObject item = new JsonObject(lines.get(i));
      assertThat(item.fieldNames()).containsExactly("position", "self_ref", "label", "text", "page_numbers",
          "heading_level", "tree_depth");
      assertThat(item.getInteger("position")).isEqualTo(i);
      assertThat(item.getJsonArray("page_numbers")).isEqualTo(new JsonArray());
      items.add(item);
    }
    JsonObject table = items.stream().filter(i -> i.getString("label").equals("table")).findFirst().orElseThrow();
    assertThat(table.getString("text")).startsWith("| Tool | Risk |");
    assertThat(table.getString("self_ref")).startsWith("#/tables/");

    JsonObject toc = new JsonObject(Files.readString(dir.resolve("toc.json")));
    assertThat(toc.getString("doc_id")).isEqualTo(doc.documentId().toString());
    JsonObject safety = toc.getJsonArray("tree").getJsonObject(0);
    assertThat(safety.getString("title")).isEqualTo("Safety");
    int start = safety.getJsonArray("item_range").getInteger(0);
    int end = safety.getJsonArray("item_range").getInteger(1);
    assertThat(items.get(start).getString("text")).isEqualTo("Safety");
    assertThat(items.subList(start, end)).extracting(i -> i.getString("text")).contains("Call 112.")
        .doesNotContain("Oil the hinges.");
    assertThat(safety.getJsonArray("children").getJsonObject(0).getString("title")).isEqualTo("Fire");

    assertThat(Files.readString(dir.resolve("content.txt"))).contains("Wear goggles.").contains("Oil the hinges.");
  }

  @Test
  @DisplayName("incremental: a second sync rewrites nothing; a replaced document is rewritten alone")
  void incremental() throws Exception {
    UUID tenant = newTenant(db);
    IngestResult a = add(tenant, "a.txt", "Doc A\n\nalpha");
    IngestResult b = add(tenant, "b.txt", "Doc B\n\nbeta");
    Path dir = await(fs.sync(tenant));
    // Back-date every file, so a rewrite cannot hide inside the filesystem's timestamp granularity.
    FileTime old = FileTime.from(Instant.parse("2020-01-01T00:00:00Z"));
    for (Path p : mtimes(dir).keySet()) {
      Files.setLastModifiedTime(dir.resolve(p), old);
    }

    await(fs.sync(tenant));
    assertThat(mtimes(dir).values()).containsOnly(old);

    add(tenant, "b.txt", "Doc B\n\nbeta, revised");
    await(fs.sync(tenant));
    Map<Path, FileTime> after = mtimes(dir);
    assertThat(after.get(Path.of(a.documentId().toString(), "content.txt"))).isEqualTo(old);
    assertThat(after.get(Path.of(b.documentId().toString(), "content.txt"))).isNotEqualTo(old);
    assertThat(Files.readString(dir.resolve(b.documentId().toString()).resolve("content.txt")))
        .contains("revised");
  }

  @Test
  @DisplayName("a file or a whole directory removed behind the sync's back is written again by the next"
      + " sync, though the sync remembers what it wrote")
  void outsideChangesSeen() throws Exception {
    UUID tenant = newTenant(db);
    IngestResult doc = add(tenant, "outside.md", MARKDOWN);
    IngestResult other = add(tenant, "other.txt", "Other\n\ntext");
    Path dir = await(fs.sync(tenant)).resolve(doc.documentId().toString());
    String items = Files.readString(dir.resolve("items.jsonl"));
    Map<Path, FileTime> otherFiles = mtimes(fs.tenantDir(tenant).resolve(other.documentId().toString()));

    Files.delete(dir.resolve("items.jsonl"));
    await(fs.sync(tenant));
    assertThat(Files.readString(dir.resolve("items.jsonl"))).isEqualTo(items);

    deleteTree(dir);
    await(fs.sync(tenant));
    assertThat(files(dir).get("items.jsonl")).isEqualTo(items);
    assertThat(mtimes(fs.tenantDir(tenant).resolve(other.documentId().toString()))).isEqualTo(otherFiles);
  }

  @Test
  @DisplayName("hard links a sync's work takes of a document's files (a scoped sandbox's view) keep that version, whole,"
      + " while the document is replaced and then deleted")
  void linksKeepTheirVersion() throws Exception {
    UUID tenant = newTenant(db);
    IngestService writing = new IngestService(vertx, pool, embedder(), fs, db.config());
    IngestResult doc = await(writing.ingest(tenant, new IngestRequest("kept.md", "uri:kept.md", null, null,
        MARKDOWN.getBytes(StandardCharsets.UTF_8))));
    // Beside the trees, on their filesystem, as ScopedViews builds a view.
    Path links = root.resolve(".links-" + tenant);
    await(fs.sync(tenant, dir -> {
      Files.createDirectory(links);
      for (String f : DocumentsFs.FILES) {
        Files.createLink(links.resolve(f), dir.resolve(doc.documentId().toString()).resolve(f));
      }
    }));
    Map<String, String> linked = files(links);
    assertThat(linked).isEqualTo(files(fs.tenantDir(tenant).resolve(doc.documentId().toString())));
    assertThat(linked.get("content.txt")).contains("Wear goggles.");

    await(writing.ingest(tenant, new IngestRequest("kept.md", "uri:kept.md", "Revised", null,
        (MARKDOWN + "\nAnd the locks.\n").getBytes(StandardCharsets.UTF_8))));
    assertThat(files(fs.tenantDir(tenant).resolve(doc.documentId().toString())).get("content.txt"))
        .endsWith("And the locks.");
    assertThat(files(links)).as("the links after the replacement").isEqualTo(linked);

    assertThat(await(new DocumentStore(pool, fs).delete(tenant, doc.documentId()))).isTrue();
    assertThat(fs.tenantDir(tenant).resolve(doc.documentId().toString())).doesNotExist();
    assertThat(files(links)).as("the links after the deletion").isEqualTo(linked);
    deleteTree(links);
  }

  @Test
  @DisplayName("deleting a document through the store removes its directory and leaves the others' files alone")
  void deleteRemovesOnlyItsDocument() throws Exception {
    UUID tenant = newTenant(db);
    IngestResult keep = add(tenant, "keep.md", MARKDOWN);
    IngestResult drop = add(tenant, "drop.md", MARKDOWN + "\nAnd the gate.\n");
    Path dir = await(fs.sync(tenant));
    Map<Path, FileTime> kept = mtimes(dir.resolve(keep.documentId().toString()));

    assertThat(await(new DocumentStore(pool, fs).delete(tenant, drop.documentId()))).isTrue();

    try (Stream<Path> entries = Files.list(dir)) {
      assertThat(entries.map(p -> p.getFileName().toString()).toList())
          .containsExactly(keep.documentId().toString());
    }
    assertThat(mtimes(dir.resolve(keep.documentId().toString()))).isEqualTo(kept);
    // And a full sync afterwards agrees: nothing to add or remove.
    await(fs.sync(tenant));
    assertThat(mtimes(dir.resolve(keep.documentId().toString()))).isEqualTo(kept);
  }

  @Test
  @DisplayName("a deleted tenant's files go, its .state markers too, after the writes queued before; a sync"
      + " queued before the deletion or asked for after it recreates nothing (red team R6-5)")
  void tenantDeleted() throws Exception {
    UUID tenant = newTenant(db);
    IngestResult doc = add(tenant, "gone.md", MARKDOWN);
    Pool one = dev.quarry.store.Database.pool(vertx, db.config(), 1);
    DocumentsFs own = new DocumentsFs(vertx, one, root);
    try {
      await(own.sync(tenant));
      Path dir = own.tenantDir(tenant);
      Path state = root.resolve(".state").resolve(tenant.toString());
      assertThat(dir.resolve(doc.documentId().toString()).resolve("content.txt")).isRegularFile();
      assertThat(state.resolve(doc.documentId().toString())).isRegularFile();

      // A sync queued before the deletion, held at its database read (the pool's one connection is taken).
      io.vertx.sqlclient.SqlConnection held = await(one.getConnection());
      io.vertx.core.Future<Path> queued = own.sync(tenant);
      io.vertx.core.Future<Void> deleted = own.tenantDeleted(tenant);
      java.util.List<String> ended = new java.util.concurrent.CopyOnWriteArrayList<>();
      queued.onComplete(ar -> ended.add("sync"));
      deleted.onComplete(ar -> ended.add("deletion"));
      await(held.close());
      await(deleted);
      assertThat(queued.isComplete()).isTrue();
      assertThat(ended).as("the deletion waits for the sync queued before it").containsExactly("sync", "deletion");
      assertThat(dir).doesNotExist();
      assertThat(state).doesNotExist();

      // After it: a sync fails cleanly, a document's deletion does nothing, and nothing comes back.
      io.vertx.core.Future<Path> later = own.sync(tenant);
      await(later.otherwiseEmpty());
      assertThat(later.failed()).isTrue();
      assertThat(later.cause()).hasMessageContaining("was deleted");
      await(own.deleted(tenant, doc.documentId()));
      assertThat(dir).doesNotExist();
      assertThat(state).doesNotExist();
    } finally {
      await(one.close());
    }
  }

  @Test
  @DisplayName("a sync that writes many documents reads them in batches, and writes each one whole")
  void manyDocuments() throws Exception {
    UUID tenant = newTenant(db);
    int n = 150;
    try (java.sql.Connection c = db.jdbc(); java.sql.Statement s = c.createStatement()) {
      s.execute("INSERT INTO documents (id, tenant_id, title, uri, source_type, content_hash, byte_size,"
          + " content, toc, item_count, chunk_count) SELECT gen_random_uuid(), '" + tenant + "', 'Note ' || g,"
          + " 'notes/' || g, 'text', md5(g::text), 10, 'Note ' || g, '{\"tree\": []}', 1 + g % 3, 0"
          + " FROM generate_series(1, " + n + ") g");
      s.execute("INSERT INTO items (tenant_id, document_id, position, self_ref, label, text, page_numbers,"
          + " heading_level, tree_depth, section_start, section_end) SELECT d.tenant_id, d.id, p,"
          + " '#/texts/' || p, 'text', d.title || ', part ' || p, '{}', 0, 1, 0, d.item_count"
          + " FROM documents d CROSS JOIN LATERAL generate_series(0, d.item_count - 1) p"
          + " WHERE d.tenant_id = '" + tenant + "'");
    }
    Path dir = await(fs.sync(tenant));

    DocumentStore store = new DocumentStore(pool);
    List<dev.quarry.store.DocumentSummary> listed = await(store.list(tenant));
    assertThat(listed).hasSize(n);
    for (dev.quarry.store.DocumentSummary d : listed) {
      Path docDir = dir.resolve(d.id().toString());
      assertThat(Files.readString(docDir.resolve("content.txt"))).isEqualTo(d.title());
      assertThat(Files.readString(docDir.resolve("items.jsonl")))
          .isEqualTo(DocumentsFs.itemsJsonl(itemsInDatabase(tenant, d.id())));
      assertThat(Files.readAllLines(docDir.resolve("items.jsonl"))).hasSize(d.itemCount());
    }
  }

  /** A document's items as its rows hold them, read straight from the database. */
  private static List<DocItem> itemsInDatabase(UUID tenant, UUID id) throws Exception {
    List<DocItem> items = new ArrayList<>();
    try (java.sql.Connection c = db.jdbc(); java.sql.PreparedStatement s = c.prepareStatement(
        "SELECT position, self_ref, label, text, page_numbers, heading_level, tree_depth FROM items"
            + " WHERE tenant_id = ? AND document_id = ? ORDER BY position")) {
      s.setObject(1, tenant);
      s.setObject(2, id);
      try (java.sql.ResultSet r = s.executeQuery()) {
        while (r.next()) {
          items.add(new DocItem(r.getInt(1), r.getString(2), r.getString(3), r.getString(4),
              List.of((Integer[]) r.getArray(5).getArray()), r.getInt(6), r.getInt(7)));
        }
      }
    }
    return items;
  }

  @Test
  @DisplayName("batches hold at most 64 documents and 20,000 items, except a single document larger than that")
  void batchSizes() {
    java.util.function.Function<Integer, DocumentsFs.Version> doc =
        items -> new DocumentsFs.Version(UUID.randomUUID(), "1 h", items);
    List<DocumentsFs.Version> many = new ArrayList<>();
    for (int i = 0; i < 130; i++) {
      many.add(doc.apply(1));
    }
    assertThat(DocumentsFs.batches(many)).extracting(List::size).containsExactly(64, 64, 2);
    List<DocumentsFs.Version> big = List.of(doc.apply(15_000), doc.apply(4_000), doc.apply(6_000),
        doc.apply(50_000), doc.apply(10));
    assertThat(DocumentsFs.batches(big)).extracting(List::size).containsExactly(2, 1, 1, 1);
    assertThat(DocumentsFs.batches(List.of())).isEmpty();
  }

  @Test
  @DisplayName("a deleted document's directory is removed; a stray directory too")
  void deletions() throws Exception {
    UUID tenant = newTenant(db);
    IngestResult keep = add(tenant, "keep.txt", "Keep\n\nme");
    IngestResult drop = add(tenant, "drop.txt", "Drop\n\nme");
    Path dir = await(fs.sync(tenant));
    Files.createDirectories(dir.resolve("not-a-document"));
    assertThat(await(new DocumentStore(pool).delete(tenant, drop.documentId()))).isTrue();

    await(fs.sync(tenant));

    try (Stream<Path> files = Files.list(dir)) {
      assertThat(files.map(p -> p.getFileName().toString()).toList())
          .containsExactly(keep.documentId().toString());
    }
  }

  @Test
  @DisplayName("the whole tree can be deleted and is rebuilt identically, with no temporary files left")
  void rebuild() throws Exception {
    UUID tenant = newTenant(db);
    add(tenant, "one.md", MARKDOWN);
    add(tenant, "two.txt", "Two\n\nsecond document");
    Path dir = await(fs.sync(tenant));
    Map<Path, String> before = contents(dir);

    deleteTree(root);
    await(fs.sync(tenant));

    assertThat(contents(dir)).isEqualTo(before).hasSize(8);
    try (Stream<Path> walk = Files.walk(root)) {
      assertThat(walk.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".tmp")).toList()).isEmpty();
    }
    try (Stream<Path> staging = Files.list(root.resolve(".staging"))) {
      assertThat(staging.toList()).isEmpty();
    }
  }

  @Test
  @DisplayName("concurrent syncs of one tenant do not trip over each other")
  void concurrentSyncs() throws Exception {
    UUID tenant = newTenant(db);
    IngestResult doc = add(tenant, "c.txt", "C\n\nconcurrent");
    List<io.vertx.core.Future<Path>> syncs = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      syncs.add(fs.sync(tenant));
    }
    await(io.vertx.core.Future.all(syncs));
    assertThat(fs.tenantDir(tenant).resolve(doc.documentId().toString()).resolve("toc.json")).isRegularFile();
  }

  @Test
  @DisplayName("writeAtomically replaces a file whole and leaves no temporary file")
  void atomicWrite() throws Exception {
    Path dir = Files.createDirectories(root.resolve("atomic-test"));
    Path f = dir.resolve("x.json");
    DocumentsFs.writeAtomically(f, "one");
    DocumentsFs.writeAtomically(f, "two");
    assertThat(Files.readString(f)).isEqualTo("two");
    try (Stream<Path> files = Files.list(dir)) {
      assertThat(files.toList()).containsExactly(f);
    }
  }

  private static Map<Path, String> contents(Path dir) throws Exception {
    Map<Path, String> out = new HashMap<>();
    for (Path p : mtimes(dir).keySet()) {
      out.put(p, Files.readString(dir.resolve(p)));
    }
    return out;
  }
}
