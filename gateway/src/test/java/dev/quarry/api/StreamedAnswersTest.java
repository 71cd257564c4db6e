package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.store.DocItem;
import dev.quarry.store.DocumentStore;
import dev.quarry.store.DocumentsFs;
import dev.quarry.support.Await;
import dev.quarry.tenancy.Tenants;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.core.buffer.Buffer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A document's items, content and table of contents, and the listing of documents, written as
 * their client takes them (issue 33), against the real gateway over real sockets: a client that
 * reads nothing is cut and holds little while it lasts, a slow one gets every byte, and the bytes are
 * those the database holds, rendered as before.
 */
@DisplayName("Large answers are written as their client takes them")
class StreamedAnswersTest {
  private static final int POOL = 3;
  private static TestGateway gateway;
  private static UUID big;
  /** The big document's items.jsonl as the database's rows render it. */
  private static byte[] bigItems;

  @BeforeAll
  static void start() throws Exception {
    gateway = TestGateway.start(config -> config.withPgPoolSize(POOL));
    // Larger than what the kernels take of an unread answer (the sender's buffer, up to tcp_wmem's
    // maximum), several times over.
    long items = Math.max(8_000, 3 * kernelSendBufferMax() / 2_000);
    big = insertDocument(Tenants.DEFAULT, "big", (int) items, 400);
    bigItems = DocumentsFs.itemsJsonl(itemsInDatabase(big)).getBytes(StandardCharsets.UTF_8);
  }

  @AfterAll
  static void stop() throws IOException {
    gateway.close();
  }

  /** The most the kernel gives one socket's send buffer (the third figure of tcp_wmem). */
  private static long kernelSendBufferMax() {
    try {
      String[] wmem = Files.readString(Path.of("/proc/sys/net/ipv4/tcp_wmem")).trim().split("\\s+");
      return Long.parseLong(wmem[2]);
    } catch (IOException | RuntimeException e) {
      return 4L << 20;
    }
  }

  /**
   * A document written straight into the database, as an ingest on another replica would leave it
   * (so this gateway's /documents copy has to be made): {@code items} items of about {@code words}
   * words each, with text that JSON has to escape, non-ASCII characters, and a table of contents.
   */
  private static UUID insertDocument(UUID tenant, String name, int items, int words) throws Exception {
    UUID id = UUID.randomUUID();
    String text = "repeat('word é € \"q\" \\ ' || chr(9) || ' ' || g || ' 🦆 ', " + words / 8 + ")";
    try (Connection c = gateway.database().jdbc()) {
      try (PreparedStatement s = c.prepareStatement("INSERT INTO documents (id, tenant_id, title, uri, source_type,"
          + " content_hash, byte_size, content, toc, item_count, chunk_count) SELECT ?, ?, ?, ?, 'text', md5(?),"
          + " 1000, string_agg(" + text + ", E'\\n\\n' ORDER BY g), ?::jsonb, ?, 0 FROM generate_series(0, ? - 1) g")) {
        s.setObject(1, id);
        s.setObject(2, tenant);
        s.setString(3, name);
        s.setString(4, name + ".txt");
        s.setString(5, id.toString());
        s.setString(6, new JsonObject().put("doc_id", id.toString()).put("title", name)
            .put("tree", new io.vertx.core.json.JsonArray().add(new JsonObject().put("self_ref", "#/texts/0")
                .put("level", 1).put("title", "Ünïcode \"heading\"").put("position", 0)
                .put("page_numbers", new io.vertx.core.json.JsonArray()).put("item_range",
                    new io.vertx.core.json.JsonArray().add(0).add(items)).put("children",
                    new io.vertx.core.json.JsonArray()))).encode());
        s.setInt(7, items);
        s.setInt(8, items);
        s.executeUpdate();
      }
      try (PreparedStatement s = c.prepareStatement("INSERT INTO items (tenant_id, document_id, position, self_ref,"
          + " label, text, page_numbers, heading_level, tree_depth, section_start, section_end) SELECT ?, ?, g,"
          + " '#/texts/' || g, 'text', " + text + ", ARRAY[1 + g / 40], 0, 1, 0, ? FROM generate_series(0, ? - 1) g")) {
        s.setObject(1, tenant);
        s.setObject(2, id);
        s.setInt(3, items);
        s.setInt(4, items);
        s.executeUpdate();
      }
    }
    return id;
  }

  private static List<DocItem> itemsInDatabase(UUID id) throws Exception {
    List<DocItem> items = new ArrayList<>();
    try (Connection c = gateway.database().jdbc(); PreparedStatement s = c.prepareStatement(
        "SELECT position, self_ref, label, text, page_numbers, heading_level, tree_depth FROM items"
            + " WHERE document_id = ? ORDER BY position")) {
      s.setObject(1, id);
      try (ResultSet r = s.executeQuery()) {
        while (r.next()) {
          items.add(new DocItem(r.getInt(1), r.getString(2), r.getString(3), r.getString(4),
              List.of((Integer[]) r.getArray(5).getArray()), r.getInt(6), r.getInt(7)));
        }
      }
    }
    return items;
  }

  private static String column(UUID id, String column) throws Exception {
    try (Connection c = gateway.database().jdbc(); PreparedStatement s = c.prepareStatement(
        "SELECT " + column + "::text FROM documents WHERE id = ?")) {
      s.setObject(1, id);
      try (ResultSet r = s.executeQuery()) {
        r.next();
        return r.getString(1);
      }
    }
  }

  private static Socket request(String path, String key, int receiveBuffer) throws IOException {
    Socket socket = new Socket();
    socket.setReceiveBufferSize(receiveBuffer);
    socket.connect(new InetSocketAddress("127.0.0.1", gateway.port()));
    socket.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + key
        + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
    return socket;
  }

  private static List<ResponseStreams.Live> streamsOf(String path) {
    return gateway.streams().live().stream().filter(l -> l.what().equals("GET " + path)).toList();
  }

  /** Files of this JVM's open descriptors under a document's /documents directory. */
  private static long openFilesOf(UUID document) throws IOException {
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      return fds.filter(fd -> {
        try {
          return Files.readSymbolicLink(fd).toString().contains(document.toString());
        } catch (IOException gone) {
          return false;
        }
      }).count();
    }
  }

  /** What a socket still delivers, to its end or its reset. */
  private static byte[] drain(Socket socket) throws IOException {
    socket.setSoTimeout(30_000);
    InputStream in = socket.getInputStream();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buf = new byte[65536];
    try {
      for (int n; (n = in.read(buf)) >= 0; ) {
        out.write(buf, 0, n);
      }
    } catch (java.net.SocketException reset) {
      // a reset is how a cut may arrive
    }
    return out.toByteArray();
  }

  @Test
  @DisplayName("a client that asks for a large document's items and reads nothing is cut at the stall limit;"
      + " meanwhile the gateway reads no more of the file than the kernel and one connection's queues hold,"
      + " and then closes it")
  void unreadAnswerIsCut() throws Exception {
    String path = "/v1/documents/" + big + "/items";
    try (Socket stalled = request(path, gateway.apiKey(), 4096)) {
      Await.until(() -> !streamsOf(path).isEmpty(), Duration.ofSeconds(60), "the answer to start");
      ResponseStreams.Live answer = streamsOf(path).get(0);
      AtomicLong most = new AtomicLong();
      Await.until(() -> {
        most.accumulateAndGet(answer.fetched(), Math::max);
        return streamsOf(path).isEmpty();
      }, SlowClient.STALL_LIMIT.multipliedBy(3), "the stalled client to be cut");
      // The kernel's send buffer, Vert.x's queue (16 slices of 8 KiB), Netty's (64 KiB), one read.
      long bound = kernelSendBufferMax() + 16 * ResponseStreams.SLICE + (64 << 10) + ResponseStreams.FILE_READ;
      assertThat(most.get()).isPositive().isLessThanOrEqualTo(bound).isLessThan(bigItems.length / 2);
      Await.until(() -> {
        try {
          return openFilesOf(big) == 0;
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      }, Duration.ofSeconds(10), "the items file to be closed");
      byte[] got = drain(stalled);
      assertThat(new String(got, 0, Math.min(got.length, 12), StandardCharsets.ISO_8859_1)).isEqualTo("HTTP/1.1 200");
      assertThat(got.length).as("what reached the client before the cut").isLessThan(bigItems.length);
    }
  }

  @Test
  @DisplayName("many clients that read nothing hold no database connection: with a pool of 3 and 12 of them"
      + " under way, another tenant lists its documents and searches")
  void unreadAnswersLeaveThePool() throws Exception {
    String path = "/v1/documents/" + big + "/items";
    TestGateway.NewTenant other = gateway.createTenant("other-" + UUID.randomUUID());
    List<Socket> stalled = new ArrayList<>();
    try {
      for (int i = 0; i < 4 * POOL; i++) {
        stalled.add(request(path, gateway.apiKey(), 4096));
      }
      Await.until(() -> streamsOf(path).size() == 4 * POOL, Duration.ofSeconds(60), "all 12 answers under way");
      HttpResponse<Buffer> listed = gateway.clientFor(other.apiKey()).get("/v1/documents").send().await();
      assertThat(listed.statusCode()).isEqualTo(200);
      HttpResponse<Buffer> searched = gateway.clientFor(other.apiKey()).post("/v1/search")
          .sendJsonObject(new JsonObject().put("query", "harbour tides")).await();
      assertThat(searched.statusCode()).isEqualTo(200);
      assertThat(streamsOf(path)).as("the stalled answers, still under way").hasSize(4 * POOL);
    } finally {
      for (Socket s : stalled) {
        s.close();
      }
    }
    Await.until(() -> streamsOf(path).isEmpty(), Duration.ofSeconds(10), "the answers released when their clients went");
  }

  @Test
  @DisplayName("a client that reads slowly, for longer than the stall limit, gets every byte of the items")
  void slowReaderGetsEverything() throws Exception {
    String path = "/v1/documents/" + big + "/items";
    try (Socket slow = request(path, gateway.apiKey(), 16384)) {
      slow.setSoTimeout(30_000);
      InputStream in = slow.getInputStream();
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      byte[] buf = new byte[16384];
      // Paced so that the whole takes 1.3 times the stall limit: the queue drains now and then, never at once.
      double bytesPerNano = bigItems.length / (SlowClient.STALL_LIMIT.toNanos() * 1.3);
      int headEnd = -1;
      long bodyLength = -1;
      long started = System.nanoTime();
      while (bodyLength < 0 || out.size() - headEnd < bodyLength) {
        int n = in.read(buf);
        if (n < 0) {
          break;
        }
        out.write(buf, 0, n);
        if (headEnd < 0) {
          String seen = out.toString(StandardCharsets.ISO_8859_1);
          int end = seen.indexOf("\r\n\r\n");
          if (end >= 0) {
            headEnd = end + 4;
            var m = java.util.regex.Pattern.compile("(?im)^content-length:\\s*(\\d+)").matcher(seen.substring(0, end));
            assertThat(m.find()).isTrue();
            bodyLength = Long.parseLong(m.group(1));
          }
        }
        long due = started + (long) (out.size() / bytesPerNano);
        long wait = due - System.nanoTime();
        if (wait > 0) {
          Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
        }
      }
      assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThan(SlowClient.STALL_LIMIT);
      byte[] all = out.toByteArray();
      assertThat(java.util.Arrays.copyOfRange(all, headEnd, all.length)).isEqualTo(bigItems);
    }
  }

  @Test
  @DisplayName("items, content and the table of contents are the database's, byte for byte as before, with"
      + " Content-Length and the same content types")
  void bytesAsBefore() throws Exception {
    UUID doc = insertDocument(Tenants.DEFAULT, "small", 300, 40);
    HttpResponse<Buffer> items = gateway.client().get("/v1/documents/" + doc + "/items").send().await();
    assertThat(items.getHeader("Content-Type")).isEqualTo("application/x-ndjson");
    assertThat(items.bodyAsString()).isEqualTo(DocumentsFs.itemsJsonl(itemsInDatabase(doc)));
    HttpResponse<Buffer> content = gateway.client().get("/v1/documents/" + doc + "/content").send().await();
    assertThat(content.getHeader("Content-Type")).isEqualTo("text/plain; charset=utf-8");
    assertThat(content.bodyAsString()).isEqualTo(column(doc, "content"));
    HttpResponse<Buffer> toc = gateway.client().get("/v1/documents/" + doc + "/toc").send().await();
    assertThat(toc.getHeader("Content-Type")).isEqualTo("application/json");
    // As the PostgreSQL client decoded the jsonb and Vert.x encoded it: in jsonb's key order, compact.
    assertThat(toc.bodyAsString()).isEqualTo(new JsonObject(column(doc, "toc")).encode());
    for (HttpResponse<Buffer> r : List.of(items, content, toc)) {
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.getHeader("Content-Length")).isEqualTo(Integer.toString(r.body().length()));
    }
    HttpResponse<Buffer> missing = gateway.client().get("/v1/documents/" + UUID.randomUUID() + "/content").send().await();
    assertThat(missing.statusCode()).isEqualTo(404);
  }

  @Test
  @DisplayName("the listing of 250 documents is written a page at a time and is, whole and in pages,"
      + " what WireFormat encodes of the store's pages")
  void listingAsBefore() throws Exception {
    TestGateway.NewTenant tenant = gateway.createTenant("many-" + UUID.randomUUID());
    try (Connection c = gateway.database().jdbc(); var s = c.createStatement()) {
      s.execute("INSERT INTO documents (id, tenant_id, title, uri, source_type, content_hash, byte_size, content,"
          + " toc, item_count, chunk_count, created_at) SELECT gen_random_uuid(), '" + tenant.id() + "',"
          + " 'Note ' || g || ' é \"q\"', 'notes/' || g, 'text', md5(g::text), 10, 'x', '{\"tree\": []}', 0, 0,"
          + " now() - (g % 7) * interval '1 second' FROM generate_series(1, 250) g");
    }
    io.vertx.sqlclient.Pool pool = dev.quarry.store.Database.pool(gateway.vertx(), gateway.config(), 1);
    try {
      DocumentStore store = new DocumentStore(pool);
      var client = gateway.clientFor(tenant.apiKey());
      HttpResponse<Buffer> all = client.get("/v1/documents").send().await();
      assertThat(all.statusCode()).isEqualTo(200);
      assertThat(all.getHeader("Transfer-Encoding")).isEqualTo("chunked");
      assertThat(all.bodyAsString()).isEqualTo(WireFormat.documents(store.page(tenant.id(), null, null).await()).encode());
      DocumentStore.ListPosition after = null;
      int pages = 0;
      do {
        String uri = "/v1/documents?limit=110" + (after == null ? "" : "&cursor=" + WireFormat.cursor(after));
        HttpResponse<Buffer> page = client.get(uri).send().await();
        DocumentStore.Page expected = store.page(tenant.id(), after, 110).await();
        assertThat(page.bodyAsString()).isEqualTo(WireFormat.documents(expected).encode());
        after = expected.next();
        pages++;
      } while (after != null);
      assertThat(pages).isEqualTo(3);
      HttpResponse<Buffer> few = client.get("/v1/documents?limit=5").send().await();
      assertThat(few.getHeader("Content-Length")).isEqualTo(Integer.toString(few.body().length()));
      assertThat(few.bodyAsString()).isEqualTo(WireFormat.documents(store.page(tenant.id(), null, 5).await()).encode());
    } finally {
      pool.close().await();
    }
  }
}
