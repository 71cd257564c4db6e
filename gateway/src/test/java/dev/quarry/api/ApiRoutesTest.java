package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.store.Database;
import dev.quarry.store.DocumentsFs;
import dev.quarry.tenancy.Tenants;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.multipart.MultipartForm;
import io.vertx.sqlclient.Pool;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("The HTTP API, on success")
class ApiRoutesTest {
  @AutoClose
  private final TestGateway gateway = TestGateway.started();

  static String markdown(String topic) {
    return "# " + topic + "\n\nThe " + topic + " crossing leaves Port Halvard at dawn.\n\n"
        + "## Timetable\n\n| Departs | Arrives |\n|---|---|\n| 06:40 | 07:15 |\n| 09:15 | 09:50 |\n\n"
        + "## Notes\n\n- Dogs on a lead.\n- Bicycles go free.\n";
  }

  HttpResponse<Buffer> upload(String fileName, byte[] bytes) {
    MultipartForm form = MultipartForm.create()
        .attribute("uri", "tests/" + fileName)
        .binaryFileUpload("file", fileName, Buffer.buffer(bytes), "application/octet-stream");
    return gateway.client().post("/v1/documents").sendMultipartForm(form).await();
  }

  HttpResponse<Buffer> get(String path) {
    return gateway.client().get(path).send().await();
  }

  JsonObject ingestMarkdown(String topic) {
    HttpResponse<Buffer> response = upload(topic.toLowerCase().replace(' ', '-') + ".md",
        markdown(topic).getBytes(StandardCharsets.UTF_8));
    assertThat(response.statusCode()).as(response.bodyAsString()).isEqualTo(201);
    return response.bodyAsJsonObject();
  }

  @Test
  @DisplayName("GET /healthz says the process is alive")
  void healthz() {
    HttpResponse<Buffer> response = get("/healthz");
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.bodyAsJsonObject().getString("status")).isEqualTo("alive");
  }

  @Test
  @DisplayName("the started gateway has the HNSW index for its embedding model in place")
  void vectorIndexAtStartUp() {
    String slug = dev.quarry.search.OnnxEmbedder.DEFAULT.toLowerCase().replaceAll("[^a-z0-9]+", "_");
    assertThat(gateway.indexes("chunks")).anyMatch(name -> name.startsWith("chunks_hnsw_" + slug));
  }

  @Test
  @DisplayName("every response carries an X-Request-Id: the client's own when it is safe to echo, else a new one")
  void requestIds() {
    HttpResponse<Buffer> first = get("/healthz");
    HttpResponse<Buffer> second = get("/v1/documents");
    assertThat(first.getHeader("X-Request-Id")).matches("req_[0-9a-f]{32}");
    assertThat(second.getHeader("X-Request-Id")).matches("req_[0-9a-f]{32}").isNotEqualTo(first.getHeader("X-Request-Id"));

    String mine = "trace-42.a:b_c";
    HttpResponse<Buffer> missing = gateway.client().get("/v1/documents/" + UUID.randomUUID())
        .putHeader("X-Request-Id", mine).send().await();
    assertThat(missing.statusCode()).isEqualTo(404);
    assertThat(missing.getHeader("X-Request-Id")).isEqualTo(mine);
    HttpResponse<Buffer> unknownRoute = gateway.client().get("/v1/nowhere").putHeader("X-Request-Id", mine).send().await();
    assertThat(unknownRoute.statusCode()).isEqualTo(404);
    assertThat(unknownRoute.getHeader("X-Request-Id")).isEqualTo(mine);

    for (String unsafe : new String[] {"has space", "x".repeat(129), "new\u00e9line"}) {
      HttpResponse<Buffer> response = gateway.client().get("/healthz").putHeader("X-Request-Id", unsafe).send().await();
      assertThat(response.getHeader("X-Request-Id")).as(unsafe).matches("req_[0-9a-f]{32}");
    }
  }

  @Test
  @DisplayName("GET /readyz says ready with the schema version once the database is migrated")
  void readyz() {
    HttpResponse<Buffer> response = get("/readyz");
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.bodyAsJsonObject().getString("status")).isEqualTo("ready");
    assertThat(response.bodyAsJsonObject().getInteger("schema_version")).isGreaterThanOrEqualTo(1);
  }

  @Test
  @DisplayName("a multipart upload answers 201 created with the document's id and counts; the same bytes again answer 200 unchanged")
  void uploadCreatesThenUnchanged() {
    byte[] bytes = markdown("Marrow Isle").getBytes(StandardCharsets.UTF_8);
    HttpResponse<Buffer> first = upload("marrow.md", bytes);
    assertThat(first.statusCode()).as(first.bodyAsString()).isEqualTo(201);
    JsonObject created = first.bodyAsJsonObject();
    assertThat(created.fieldNames()).containsExactlyInAnyOrder("id", "status", "title", "source_type", "item_count", "chunk_count",
        "undecodable_chars", "undecodable_pages");
    assertThat(created.getJsonArray("undecodable_pages")).isEmpty();
    assertThat(created.getString("status")).isEqualTo("created");
    assertThat(created.getString("title")).isEqualTo("Marrow Isle");
    assertThat(created.getString("source_type")).isEqualTo("markdown");
    assertThat(created.getInteger("item_count")).isPositive();
    assertThat(created.getInteger("chunk_count")).isPositive();
    UUID.fromString(created.getString("id"));

    HttpResponse<Buffer> again = upload("marrow.md", bytes);
    assertThat(again.statusCode()).isEqualTo(200);
    assertThat(again.bodyAsJsonObject().getString("status")).isEqualTo("unchanged");
    assertThat(again.bodyAsJsonObject().getString("id")).isEqualTo(created.getString("id"));
    assertThat(gateway.leftoverUploads()).isZero();
  }

  @Test
  @DisplayName("JSON documents without a uri never replace one another, even with one title: each gets"
      + " its content's uri; the same content again is unchanged")
  void jsonWithoutUri() {
    JsonObject first = new JsonObject().put("title", "Harbour notes").put("content", markdown("Ness quay"))
        .put("content_type", "text/markdown");
    JsonObject second = first.copy().put("content", markdown("Skerry slip"));
    HttpResponse<Buffer> a = gateway.client().post("/v1/documents").sendJsonObject(first).await();
    HttpResponse<Buffer> b = gateway.client().post("/v1/documents").sendJsonObject(second).await();
    assertThat(a.statusCode()).as(a.bodyAsString()).isEqualTo(201);
    assertThat(b.statusCode()).as(b.bodyAsString()).isEqualTo(201);
    assertThat(b.bodyAsJsonObject().getString("status")).isEqualTo("created");
    assertThat(b.bodyAsJsonObject().getString("id")).isNotEqualTo(a.bodyAsJsonObject().getString("id"));
    for (HttpResponse<Buffer> r : java.util.List.of(a, b)) {
      JsonObject doc = get("/v1/documents/" + r.bodyAsJsonObject().getString("id")).bodyAsJsonObject();
      assertThat(doc.getString("uri")).matches("content:sha256:[0-9a-f]{16}");
      assertThat(doc.getString("title")).isEqualTo("Harbour notes");
    }
    HttpResponse<Buffer> again = gateway.client().post("/v1/documents").sendJsonObject(first).await();
    assertThat(again.bodyAsJsonObject().getString("status")).isEqualTo("unchanged");
    assertThat(again.bodyAsJsonObject().getString("id")).isEqualTo(a.bodyAsJsonObject().getString("id"));
  }

  @Test
  @DisplayName("the uri decides which document an ingest is about (red team R6-4): uri B's new version equal"
      + " to A's bytes replaces B (201, B's id), A's bytes under a new uri (JSON, multipart, streamed, or no"
      + " uri) are a document of their own; only the same uri with the same bytes is unchanged")
  void sameBytesUnderAnotherUri() {
    TestGateway.NewTenant tenant = gateway.createTenant("same-bytes");
    io.vertx.ext.web.client.WebClient client = gateway.clientFor(tenant.apiKey());
    String report = "Quarterly report: revenue 7 million, margin 31 percent.";
    java.util.function.Function<JsonObject, HttpResponse<Buffer>> post =
        body -> client.post("/v1/documents").sendJsonObject(body).await();
    JsonObject a = post.apply(new JsonObject().put("content", report).put("uri", "reports/a").put("title", "A"))
        .bodyAsJsonObject();
    JsonObject b = post.apply(new JsonObject().put("content", "Draft: revenue unknown, to be filled in.")
        .put("uri", "reports/b").put("title", "B draft")).bodyAsJsonObject();

    HttpResponse<Buffer> b2 = post.apply(new JsonObject().put("content", report).put("uri", "reports/b")
        .put("title", "B final"));
    assertThat(b2.statusCode()).as(b2.bodyAsString()).isEqualTo(201);
    assertThat(b2.bodyAsJsonObject().getString("status")).isEqualTo("replaced");
    assertThat(b2.bodyAsJsonObject().getString("id")).isEqualTo(b.getString("id")).isNotEqualTo(a.getString("id"));
    assertThat(b2.bodyAsJsonObject().getString("title")).isEqualTo("B final");
    JsonObject bNow = client.get("/v1/documents/" + b.getString("id")).send().await().bodyAsJsonObject();
    assertThat(bNow.getInteger("version")).isEqualTo(2);
    assertThat(bNow.getString("title")).isEqualTo("B final");
    assertThat(client.get("/v1/documents/" + b.getString("id") + "/content").send().await().bodyAsString())
        .isEqualTo(report);
    JsonArray hits = client.post("/v1/search").sendJsonObject(new JsonObject().put("query", "draft revenue unknown"))
        .await().bodyAsJsonObject().getJsonArray("results");
    assertThat(hits.stream().map(h -> ((JsonObject) h).getString("content"))).noneMatch(c -> c.contains("Draft"));

    // A's bytes under uris not seen before: each a new document, whichever way they come.
    MultipartForm form = MultipartForm.create().attribute("uri", "reports/c")
        .binaryFileUpload("file", "c.txt", Buffer.buffer(report), "text/plain");
    HttpResponse<Buffer> c = client.post("/v1/documents").sendMultipartForm(form).await();
    HttpResponse<Buffer> named = client.post("/v1/documents").sendMultipartForm(MultipartForm.create()
        .binaryFileUpload("file", "d.txt", Buffer.buffer(report), "text/plain")).await();
    HttpResponse<Buffer> streamed = client.post("/v1/documents?stream=true")
        .sendJsonObject(new JsonObject().put("content", report).put("uri", "reports/e")).await();
    HttpResponse<Buffer> noUri = post.apply(new JsonObject().put("content", report));
    assertThat(streamed.statusCode()).isEqualTo(200);
    assertThat(streamed.bodyAsString()).contains("event: result").contains("\"status\":\"created\"");
    java.util.Set<String> ids = new java.util.HashSet<>(java.util.List.of(a.getString("id"), b.getString("id")));
    for (HttpResponse<Buffer> r : java.util.List.of(c, named, noUri)) {
      assertThat(r.statusCode()).as(r.bodyAsString()).isEqualTo(201);
      assertThat(r.bodyAsJsonObject().getString("status")).isEqualTo("created");
      assertThat(ids.add(r.bodyAsJsonObject().getString("id"))).as("a new id").isTrue();
    }
    assertThat(uriOf(client, noUri)).matches("content:sha256:[0-9a-f]{16}");
    JsonArray docs = client.get("/v1/documents").send().await().bodyAsJsonObject().getJsonArray("documents");
    assertThat(docs.stream().map(d -> ((JsonObject) d).getString("uri")))
        .containsExactlyInAnyOrder("reports/a", "reports/b", "reports/c", "d.txt", "reports/e", uriOf(client, noUri));

    // The same uri with the same bytes again: unchanged, that uri's document.
    HttpResponse<Buffer> again = post.apply(new JsonObject().put("content", report).put("uri", "reports/b"));
    assertThat(again.statusCode()).isEqualTo(200);
    assertThat(again.bodyAsJsonObject().getString("status")).isEqualTo("unchanged");
    assertThat(again.bodyAsJsonObject().getString("id")).isEqualTo(b.getString("id"));
    HttpResponse<Buffer> noUriAgain = post.apply(new JsonObject().put("content", report));
    assertThat(noUriAgain.statusCode()).isEqualTo(200);
    assertThat(noUriAgain.bodyAsJsonObject().getString("id")).isEqualTo(noUri.bodyAsJsonObject().getString("id"));
  }

  private static String uriOf(io.vertx.ext.web.client.WebClient client, HttpResponse<Buffer> ingested) {
    return client.get("/v1/documents/" + ingested.bodyAsJsonObject().getString("id")).send().await()
        .bodyAsJsonObject().getString("uri");
  }

  @Test
  @DisplayName("a JSON body {title, uri, content, content_type} is ingested like a file")
  void jsonIngest() {
    JsonObject body = new JsonObject()
        .put("title", "Tollan pier notes")
        .put("uri", "notes://tollan-pier")
        .put("content", markdown("Tollan pier"))
        .put("content_type", "text/markdown");
    HttpResponse<Buffer> response = gateway.client().post("/v1/documents").sendJsonObject(body).await();
    assertThat(response.statusCode()).as(response.bodyAsString()).isEqualTo(201);
    JsonObject result = response.bodyAsJsonObject();
    assertThat(result.getString("title")).isEqualTo("Tollan pier notes");
    assertThat(result.getString("source_type")).isEqualTo("markdown");

    JsonObject document = get("/v1/documents/" + result.getString("id")).bodyAsJsonObject();
    assertThat(document.getString("uri")).isEqualTo("notes://tollan-pier");
  }

  @Test
  @DisplayName("GET /v1/documents lists documents with exactly the documented fields")
  void listDocuments() {
    String id = ingestMarkdown("Skerry Point").getString("id");
    HttpResponse<Buffer> response = get("/v1/documents");
    assertThat(response.statusCode()).isEqualTo(200);
    JsonArray documents = response.bodyAsJsonObject().getJsonArray("documents");
    JsonObject listed = documents.stream().map(JsonObject.class::cast)
        .filter(d -> d.getString("id").equals(id)).findFirst().orElseThrow();
    assertThat(listed.fieldNames()).containsExactlyInAnyOrder("id", "title", "uri", "source_type", "byte_size",
        "item_count", "chunk_count", "version", "created_at", "updated_at");
    assertThat(listed.getString("uri")).isEqualTo("tests/skerry-point.md");
    assertThat(listed.getLong("byte_size")).isEqualTo(markdown("Skerry Point").getBytes(StandardCharsets.UTF_8).length);
    assertThat(listed.getInteger("version")).isEqualTo(1);
    assertThat(java.time.OffsetDateTime.parse(listed.getString("created_at"))).isNotNull();
  }

  @Test
  @DisplayName("GET /v1/documents/:id answers the same shape as the list, for one document")
  void getDocument() {
    String id = ingestMarkdown("North Jetty").getString("id");
    HttpResponse<Buffer> response = get("/v1/documents/" + id);
    assertThat(response.statusCode()).isEqualTo(200);
    JsonObject document = response.bodyAsJsonObject();
    assertThat(document.getString("id")).isEqualTo(id);
    assertThat(document.getString("title")).isEqualTo("North Jetty");
    assertThat(document.fieldNames()).hasSize(10);
  }

  @Test
  @DisplayName("GET /v1/documents/:id/items answers NDJSON lines identical to the documents filesystem's items.jsonl")
  void items() throws Exception {
    String id = ingestMarkdown("East Quay").getString("id");
    HttpResponse<Buffer> response = get("/v1/documents/" + id + "/items");
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.getHeader("Content-Type")).isEqualTo("application/x-ndjson");
    String body = response.bodyAsString();
    var lines = body.lines().toList();
    assertThat(lines).isNotEmpty();
    for (int i = 0; i < lines.size(); i++) {
      JsonObject item = new JsonObject(lines.get(i));
      assertThat(item.fieldNames()).containsExactly("position", "self_ref", "label", "text", "page_numbers",
          "heading_level", "tree_depth");
      assertThat(item.getInteger("position")).isEqualTo(i);
    }
    assertThat(lines).anySatisfy(l -> assertThat(new JsonObject(l).getString("label")).isEqualTo("table"));

    Pool pool = Database.pool(gateway.vertx(), gateway.config());
    try {
      Path tenantDir = new DocumentsFs(gateway.vertx(), pool, gateway.dataDir().resolve("fs-check"))
          .sync(Tenants.DEFAULT).await();
      assertThat(Files.readString(tenantDir.resolve(id).resolve("items.jsonl"))).isEqualTo(body);
    } finally {
      pool.close().await();
    }
  }

  @Test
  @DisplayName("GET /v1/documents/:id/toc answers toc.json: the document's section tree")
  void toc() {
    String id = ingestMarkdown("West Slip").getString("id");
    HttpResponse<Buffer> response = get("/v1/documents/" + id + "/toc");
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.getHeader("Content-Type")).isEqualTo("application/json");
    JsonObject toc = response.bodyAsJsonObject();
    assertThat(toc.getString("doc_id")).isEqualTo(id);
    assertThat(toc.getString("title")).isEqualTo("West Slip");
    String treeText = toc.getJsonArray("tree").encode();
    assertThat(treeText).contains("Timetable").contains("Notes").contains("item_range");
  }

  @Test
  @DisplayName("GET /v1/documents/:id/content answers the full text as UTF-8 plain text")
  void content() {
    String id = ingestMarkdown("South Bay").getString("id");
    HttpResponse<Buffer> response = get("/v1/documents/" + id + "/content");
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.getHeader("Content-Type")).isEqualTo("text/plain; charset=utf-8");
    assertThat(response.bodyAsString()).contains("The South Bay crossing leaves Port Halvard at dawn.");
  }

  @Test
  @DisplayName("DELETE /v1/documents/:id answers 204 and the document, its items and chunks are gone; a second DELETE is 404")
  void delete() {
    String id = ingestMarkdown("Old Ferry Slip").getString("id");
    HttpResponse<Buffer> deleted = gateway.client().delete("/v1/documents/" + id).send().await();
    assertThat(deleted.statusCode()).isEqualTo(204);
    assertThat(get("/v1/documents/" + id).statusCode()).isEqualTo(404);
    assertThat(get("/v1/documents/" + id + "/items").statusCode()).isEqualTo(404);
    HttpResponse<Buffer> again = gateway.client().delete("/v1/documents/" + id).send().await();
    assertThat(again.statusCode()).isEqualTo(404);
    assertThat(again.bodyAsJsonObject().getJsonObject("error").getString("code")).isEqualTo("not_found");
    assertThat(again.bodyAsJsonObject().getJsonObject("error").getString("message")).contains(id);
  }

  @Test
  @DisplayName("POST /v1/search answers hits with exactly the keys of docs/CONTRACT.md, best first")
  void search() {
    String id = ingestMarkdown("Lighthouse Point").getString("id");
    JsonObject request = new JsonObject().put("query", "Lighthouse Point timetable departures").put("limit", 3)
        .put("document_ids", new JsonArray().add(id));
    HttpResponse<Buffer> response = gateway.client().post("/v1/search").sendJsonObject(request).await();
    assertThat(response.statusCode()).as(response.bodyAsString()).isEqualTo(200);
    JsonArray results = response.bodyAsJsonObject().getJsonArray("results");
    assertThat(results).isNotEmpty();
    assertThat(results.size()).isLessThanOrEqualTo(3);
    double previous = Double.MAX_VALUE;
    for (Object o : results) {
      JsonObject hit = (JsonObject) o;
      assertThat(hit.fieldNames()).containsExactly("chunk_id", "content", "document_id", "document_title",
          "document_uri", "score", "page_numbers", "headings", "doc_item_refs", "labels");
      assertThat(hit.getString("document_id")).isEqualTo(id);
      assertThat(hit.getString("document_title")).isEqualTo("Lighthouse Point");
      assertThat(hit.getDouble("score")).isLessThanOrEqualTo(previous);
      previous = hit.getDouble("score");
    }
    assertThat(results.getJsonObject(0).getString("content")).contains("06:40");
  }

  @Test
  @DisplayName("an unknown route answers a JSON 404, not an HTML page")
  void unknownRoute() {
    HttpResponse<Buffer> response = get("/v1/nothing-here");
    assertThat(response.statusCode()).isEqualTo(404);
    assertThat(response.bodyAsJsonObject().getJsonObject("error").getString("message")).contains("/v1/nothing-here");
  }
}
