package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.api.BadInputs.BadInput;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.multipart.MultipartForm;
import java.util.List;
import java.util.stream.Stream;
import dev.quarry.ingest.IngestService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Nothing in this class may ever be stored: every test ends by counting rows. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("The HTTP API, on bad input")
class ApiBadInputTest {
  @AutoClose
  private final TestGateway gateway = TestGateway.started();

  @AfterEach
  void nothingStored() {
    assertThat(gateway.count("documents")).as("documents").isZero();
    assertThat(gateway.count("items")).as("items").isZero();
    assertThat(gateway.count("chunks")).as("chunks").isZero();
    assertThat(gateway.leftoverUploads()).as("files left in the uploads directory").isZero();
  }

  static Stream<BadInput> badFiles() throws Exception {
    return BadInputs.all().stream();
  }

  /** The error object of a JSON error response, after checking the status and the shape. */
  static JsonObject error(HttpResponse<Buffer> response, int status) {
    assertThat(response.statusCode()).as(response.bodyAsString()).isEqualTo(status);
    assertThat(response.getHeader("Content-Type")).isEqualTo("application/json");
    JsonObject body = response.bodyAsJsonObject();
    assertThat(body.fieldNames()).containsExactly("error");
    JsonObject error = body.getJsonObject("error");
    assertThat(error.fieldNames()).containsExactlyInAnyOrder("code", "message");
    assertThat(error.getString("message")).doesNotContain("Exception").doesNotContain("\tat ");
    return error;
  }

  HttpResponse<Buffer> upload(String fileName, byte[] bytes) {
    MultipartForm form = MultipartForm.create()
        .binaryFileUpload("file", fileName, Buffer.buffer(bytes), "application/octet-stream");
    return gateway.client().post("/v1/documents").sendMultipartForm(form).await();
  }

  HttpResponse<Buffer> postJson(String path, String rawBody) {
    return gateway.client().post(path).putHeader("Content-Type", "application/json")
        .sendBuffer(Buffer.buffer(rawBody)).await();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badFiles")
  @DisplayName("a bad file is refused with a 4xx whose JSON error names the file and the reason, and nothing is stored")
  void badFile(BadInput input) {
    JsonObject error = error(upload(input.fileName(), input.bytes()), input.status());
    assertThat(error.getString("code")).isEqualTo(input.code());
    if (input.status() == 413) {
      assertThat(error.getString("message")).contains("256 KiB");
    } else {
      assertThat(error.getString("message")).startsWith(input.fileName() + ": ");
    }
  }

  @Test
  @DisplayName("a multipart request without the 'file' field is a 400 naming the field")
  void missingFileField() {
    MultipartForm form = MultipartForm.create().attribute("uri", "somewhere.md");
    JsonObject error = error(gateway.client().post("/v1/documents").sendMultipartForm(form).await(), 400);
    assertThat(error.getString("code")).isEqualTo("missing_file");
    assertThat(error.getString("message")).contains("'file'");
  }

  @Test
  @DisplayName("a JSON ingest body that is not JSON is a 400 malformed_json")
  void malformedIngestJson() {
    JsonObject error = error(postJson("/v1/documents", "{\"title\": \"x\", \"content\": "), 400);
    assertThat(error.getString("code")).isEqualTo("malformed_json");
  }

  @Test
  @DisplayName("a JSON ingest body without 'content' is a 400 naming the field")
  void ingestWithoutContent() {
    JsonObject error = error(postJson("/v1/documents", "{\"title\": \"x\"}"), 400);
    assertThat(error.getString("message")).contains("'content'");
  }

  @Test
  @DisplayName("a uri or title longer than Quarry keeps is a 400 field_too_long naming the field, in JSON and multipart")
  void overlongUriAndTitle() {
    String longUri = "https://example.org/" + "x".repeat(IngestService.MAX_URI_CHARS);
    JsonObject error = error(gateway.client().post("/v1/documents").sendJsonObject(new JsonObject()
        .put("uri", longUri).put("content", "# A\n\nText.\n")).await(), 400);
    assertThat(error.getString("code")).isEqualTo("field_too_long");
    assertThat(error.getString("message")).contains("'uri'").contains(String.valueOf(IngestService.MAX_URI_CHARS));
    // Within the limit in characters, over it in bytes: what the unique index on uri would refuse.
    String wide = "\u00e9".repeat(IngestService.MAX_URI_CHARS / 2 + 10);
    assertThat(error(gateway.client().post("/v1/documents").sendJsonObject(new JsonObject()
        .put("uri", wide).put("content", "# A\n\nText.\n")).await(), 400).getString("code")).isEqualTo("field_too_long");
    MultipartForm form = MultipartForm.create()
        .attribute("title", "t".repeat(IngestService.MAX_TITLE_CHARS + 1))
        .binaryFileUpload("file", "a.md", io.vertx.core.buffer.Buffer.buffer("# A\n\nText.\n"), "text/markdown");
    JsonObject titled = error(gateway.client().post("/v1/documents").sendMultipartForm(form).await(), 400);
    assertThat(titled.getString("code")).isEqualTo("field_too_long");
    assertThat(titled.getString("message")).contains("'title'");
  }

  @Test
  @DisplayName("a JSON ingest body whose 'title' is not a string is a 400 naming the field")
  void ingestWithNumericTitle() {
    JsonObject error = error(postJson("/v1/documents", "{\"title\": 7, \"content\": \"hello\"}"), 400);
    assertThat(error.getString("code")).isEqualTo("invalid_title");
    assertThat(error.getString("message")).contains("'title'");
  }

  @Test
  @DisplayName("an upload in neither multipart nor JSON form is a 415 saying which forms are accepted")
  void wrongContentType() {
    HttpResponse<Buffer> response = gateway.client().post("/v1/documents").putHeader("Content-Type", "text/plain")
        .sendBuffer(Buffer.buffer("hello")).await();
    JsonObject error = error(response, 415);
    assertThat(error.getString("message")).contains("multipart/form-data").contains("text/plain");
  }

  @Test
  @DisplayName("a document id that is not a UUID is a 400 naming the id, on every document route")
  void badUuid() {
    for (String path : List.of("/v1/documents/not-a-uuid", "/v1/documents/not-a-uuid/items",
        "/v1/documents/not-a-uuid/toc", "/v1/documents/not-a-uuid/content")) {
      JsonObject error = error(gateway.client().get(path).send().await(), 400);
      assertThat(error.getString("code")).isEqualTo("invalid_id");
      assertThat(error.getString("message")).contains("'not-a-uuid'");
    }
    JsonObject error = error(gateway.client().delete("/v1/documents/1-2-3-4-5").send().await(), 400);
    assertThat(error.getString("message")).contains("'1-2-3-4-5'");
  }

  @Test
  @DisplayName("a well-formed id that names no document is a 404 naming the id")
  void unknownId() {
    String id = "6f1c7d3e-0000-4000-8000-000000000000";
    JsonObject error = error(gateway.client().get("/v1/documents/" + id + "/toc").send().await(), 404);
    assertThat(error.getString("message")).contains(id);
  }

  @Test
  @DisplayName("a search body that is not JSON is a 400 malformed_json")
  void malformedSearchJson() {
    assertThat(error(postJson("/v1/search", "{query: berths"), 400).getString("code")).isEqualTo("malformed_json");
    assertThat(error(postJson("/v1/search", "[\"berths\"]"), 400).getString("code")).isEqualTo("malformed_json");
    assertThat(error(postJson("/v1/search", ""), 400).getString("code")).isEqualTo("malformed_json");
  }

  @Test
  @DisplayName("a body naming a field twice in one object is a 400 duplicate_field naming it, at any depth")
  void duplicateField() {
    JsonObject top = error(postJson("/v1/search", "{\"query\": \"berths\", \"limit\": 1, \"limit\": 100}"), 400);
    assertThat(top.getString("code")).isEqualTo("duplicate_field");
    assertThat(top.getString("message")).contains("'limit'");
    JsonObject nested = error(postJson("/v1/executions",
        "{\"code\": \"print(1)\", \"limits\": {\"wall_time_ms\": 10, \"wall_time_ms\": 20}}"), 400);
    assertThat(nested.getString("code")).isEqualTo("duplicate_field");
    assertThat(nested.getString("message")).contains("'wall_time_ms'");
    assertThat(postJson("/v1/search", "{\"query\": \"berths\", \"limit\": 1}").statusCode()).isEqualTo(200);
  }

  @Test
  @DisplayName("a missing, empty, blank or over-long query is a 400 naming 'query'")
  void badQuery() {
    String tooLong = "berth ".repeat(gateway.config().maxQueryChars() / 6 + 1);
    for (JsonObject body : List.of(new JsonObject(), new JsonObject().put("query", ""),
        new JsonObject().put("query", "   "), new JsonObject().put("query", 42),
        new JsonObject().put("query", tooLong))) {
      JsonObject error = error(gateway.client().post("/v1/search").sendJsonObject(body).await(), 400);
      assertThat(error.getString("code")).isEqualTo("invalid_query");
      assertThat(error.getString("message")).contains("'query'");
    }
  }

  @Test
  @DisplayName("a limit that is not an integer between 1 and the maximum is a 400 naming 'limit'")
  void badLimit() {
    for (Object limit : List.of(0, -3, gateway.config().searchMaxLimit() + 1, "ten", 2.5, true)) {
      JsonObject body = new JsonObject().put("query", "berths").put("limit", limit);
      JsonObject error = error(gateway.client().post("/v1/search").sendJsonObject(body).await(), 400);
      assertThat(error.getString("code")).isEqualTo("invalid_limit");
      assertThat(error.getString("message")).contains("'limit'");
    }
  }

  @Test
  @DisplayName("document_ids that are not a list of UUIDs are a 400 naming the bad element")
  void badDocumentIds() {
    JsonObject notAList = new JsonObject().put("query", "berths").put("document_ids", "abc");
    assertThat(error(gateway.client().post("/v1/search").sendJsonObject(notAList).await(), 400)
        .getString("message")).contains("'document_ids'");
    JsonObject badElement = new JsonObject().put("query", "berths")
        .put("document_ids", new JsonArray().add("6f1c7d3e-0000-4000-8000-000000000000").add("nope"));
    assertThat(error(gateway.client().post("/v1/search").sendJsonObject(badElement).await(), 400)
        .getString("message")).contains("'document_ids[1]'").contains("nope");
    JsonArray tooMany = new JsonArray();
    for (int i = 0; i <= dev.quarry.search.SearchRequest.MAX_DOCUMENT_IDS; i++) {
      tooMany.add(java.util.UUID.randomUUID().toString());
    }
    JsonObject error = error(gateway.client().post("/v1/search")
        .sendJsonObject(new JsonObject().put("query", "berths").put("document_ids", tooMany))
        .await(), 400);
    assertThat(error.getString("code")).isEqualTo("invalid_document_ids");
    assertThat(error.getString("message")).contains("'document_ids'").contains("at most");
  }
}
