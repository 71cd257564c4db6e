package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import static dev.quarry.agent.ScriptedModelServer.answer;
import static dev.quarry.agent.ScriptedModelServer.execute;

import dev.quarry.agent.AgentHarness;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import java.util.function.BiFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Tenant B against tenant A's objects, endpoint by endpoint. Every endpoint that takes an object's
 * id is a row of {@link #objectEndpoints()}: B's request for A's object must be answered exactly as
 * B's request for an id that exists nowhere (same status, same bytes once the id is swapped), and
 * must change nothing of A's. Analyses are rows of {@link #analysisEndpoints()}; an execution scoped
 * to A's document is refused exactly as one scoped to a missing document.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("Cross-tenant matrix: tenant B cannot read, list, search, change or delete tenant A's documents, nor tell they exist")
class CrossTenantMatrixTest {
  private static final String SECRET = "Quillfeather";
  private static final String A_MARKDOWN = "# Confidential " + SECRET + " memo\n\n"
      + "The " + SECRET + " acquisition closes in March at 41 million.\n\n"
      + "## Terms\n\n| Item | Value |\n|---|---|\n| Price | 41m |\n| Close | March |\n";

  /** One endpoint that names an object by id: how B calls it for a given id. */
  record ObjectEndpoint(String name, BiFunction<WebClient, UUID, HttpResponse<Buffer>> call) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<ObjectEndpoint> objectEndpoints() {
    return Stream.of(
        new ObjectEndpoint("GET /v1/documents/{id}", (c, id) -> c.get("/v1/documents/" + id).send().await()),
        new ObjectEndpoint("GET /v1/documents/{id}/items", (c, id) -> c.get("/v1/documents/" + id + "/items").send().await()),
        new ObjectEndpoint("GET /v1/documents/{id}/toc", (c, id) -> c.get("/v1/documents/" + id + "/toc").send().await()),
        new ObjectEndpoint("GET /v1/documents/{id}/content", (c, id) -> c.get("/v1/documents/" + id + "/content").send().await()),
        new ObjectEndpoint("DELETE /v1/documents/{id}", (c, id) -> c.delete("/v1/documents/" + id).send().await()),
        new ObjectEndpoint("POST /v1/search scoped to {id}", (c, id) -> c.post("/v1/search").sendJsonObject(
            new JsonObject().put("query", SECRET + " acquisition").put("document_ids", new JsonArray().add(id.toString())))
            .await()),
        new ObjectEndpoint("POST /v1/executions scoped to {id}", (c, id) -> c.post("/v1/executions").sendJsonObject(
            new JsonObject().put("code", "print(1)").put("document_ids", new JsonArray().add(id.toString()))).await()));
  }

  /** Every endpoint that names an analysis by id; B calls each with A's analysis and a missing one. */
  static Stream<ObjectEndpoint> analysisEndpoints() {
    return Stream.of(
        new ObjectEndpoint("GET /v1/analyses/{id}", (c, id) -> c.get("/v1/analyses/" + id).send().await()),
        new ObjectEndpoint("GET /v1/analyses/{id}/events", (c, id) -> c.get("/v1/analyses/" + id + "/events").send().await()),
        new ObjectEndpoint("POST /v1/analyses/{id}/replay", (c, id) -> c.post("/v1/analyses/" + id + "/replay").send().await()));
  }

  private AgentHarness harness;
  private TestGateway gateway;
  private WebClient a;
  private WebClient b;
  private UUID tenantA;
  private UUID tenantB;
  private UUID docA;
  private String contentA;
  private UUID analysisA;
  private String analysisAJson;

  @BeforeAll
  void start() throws Exception {
    // Analyses need a model: the scripted one, with real sandboxes, as the agent tests have it.
    harness = new AgentHarness(false);
    gateway = harness.gateway;
    TestGateway.NewTenant ta = gateway.createTenant("matrix-a");
    TestGateway.NewTenant tb = gateway.createTenant("matrix-b");
    tenantA = ta.id();
    tenantB = tb.id();
    a = gateway.clientFor(ta.apiKey());
    b = gateway.clientFor(tb.apiKey());
    HttpResponse<Buffer> created = a.post("/v1/documents").sendJsonObject(new JsonObject()
        .put("uri", "memos/secret.md").put("content_type", "text/markdown").put("content", A_MARKDOWN)).await();
    assertThat(created.statusCode()).as(created.bodyAsString()).isEqualTo(201);
    docA = UUID.fromString(created.bodyAsJsonObject().getString("id"));
    contentA = a.get("/v1/documents/" + docA + "/content").send().await().bodyAsString();
    // B has a document of its own, so that its listings and searches are not empty by accident.
    assertThat(b.post("/v1/documents").sendJsonObject(new JsonObject().put("uri", "b.md")
        .put("content_type", "text/markdown").put("content", "# Timetable\n\nThe ferry leaves at dawn.\n"))
        .await().statusCode()).isEqualTo(201);
    harness.model.then(execute("print(open('/documents/" + docA + "/content.txt').read()[:40])"),
        answer("The " + SECRET + " acquisition closes in March.", "print('" + SECRET + "')"));
    HttpResponse<Buffer> analysis = a.post("/v1/analyses").sendJsonObject(new JsonObject()
        .put("question", "When does the " + SECRET + " acquisition close?").put("stream", false)
        .put("document_ids", new JsonArray().add(docA.toString()))).await();
    assertThat(analysis.statusCode()).as(analysis.bodyAsString()).isEqualTo(200);
    analysisA = UUID.fromString(analysis.bodyAsJsonObject().getString("id"));
    analysisAJson = a.get("/v1/analyses/" + analysisA).send().await().bodyAsString();
    assertThat(analysisAJson).contains(SECRET);
    // B has an analysis of its own, so that its list is not empty by accident.
    harness.model.then(execute("print('dawn')"), answer("At dawn.", "print('dawn')"));
    assertThat(b.post("/v1/analyses").sendJsonObject(new JsonObject().put("question", "When does the ferry leave?")
        .put("stream", false)).await().statusCode()).isEqualTo(200);
  }

  @AfterAll
  void stop() throws Exception {
    harness.close();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("analysisEndpoints")
  @DisplayName("B's request for A's analysis is answered byte for byte as one for an analysis that does not exist")
  void analysisIndistinguishableFromMissing(ObjectEndpoint endpoint) {
    UUID missing = UUID.randomUUID();
    HttpResponse<Buffer> forA = endpoint.call().apply(b, analysisA);
    HttpResponse<Buffer> forMissing = endpoint.call().apply(b, missing);

    assertThat(forA.statusCode()).as(forA.bodyAsString()).isEqualTo(404);
    assertThat(forMissing.statusCode()).isEqualTo(404);
    assertThat(forA.getHeader("Content-Type")).isEqualTo(forMissing.getHeader("Content-Type"));
    assertThat(forA.bodyAsString())
        .isEqualTo(forMissing.bodyAsString().replace(missing.toString(), analysisA.toString()));
    assertThat(forA.bodyAsString()).doesNotContain(SECRET);
    assertThat(a.get("/v1/analyses/" + analysisA).send().await().bodyAsString()).isEqualTo(analysisAJson);
  }

  @Test
  @DisplayName("B's list of analyses shows nothing of A's")
  void analysisList() {
    HttpResponse<Buffer> list = b.get("/v1/analyses").send().await();
    assertThat(list.statusCode()).isEqualTo(200);
    assertThat(list.bodyAsJsonObject().getJsonArray("analyses")).hasSize(1);
    assertThat(list.bodyAsString()).doesNotContain(analysisA.toString()).doesNotContain(SECRET);
    assertThat(a.get("/v1/analyses").send().await().bodyAsString()).contains(analysisA.toString());
  }

  @Test
  @DisplayName("B's execution scoped to A's document gets the 404 of a missing id, runs nothing, and a scope of"
      + " B's own document runs")
  void executionScopedToForeignDocument() {
    HttpResponse<Buffer> forA = b.post("/v1/executions").sendJsonObject(new JsonObject()
        .put("code", "print(open('/documents/" + docA + "/content.txt').read())")
        .put("document_ids", new JsonArray().add(docA.toString()))).await();
    assertThat(forA.statusCode()).as(forA.bodyAsString()).isEqualTo(404);
    assertThat(forA.bodyAsJsonObject().getJsonObject("error").getString("code")).isEqualTo("unknown_documents");
    assertThat(forA.bodyAsString()).doesNotContain(SECRET);
    String own = b.get("/v1/documents").send().await().bodyAsJsonObject().getJsonArray("documents")
        .getJsonObject(0).getString("id");
    HttpResponse<Buffer> forOwn = b.post("/v1/executions").sendJsonObject(new JsonObject()
        .put("code", "import pathlib\nprint(sorted(p.name for p in pathlib.Path('/documents').iterdir()))")
        .put("document_ids", new JsonArray().add(own))).await();
    assertThat(forOwn.statusCode()).as(forOwn.bodyAsString()).isEqualTo(200);
    assertThat(forOwn.bodyAsString()).contains(own).doesNotContain(docA.toString());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("objectEndpoints")
  @DisplayName("B's request for A's object is answered byte for byte as one for an id that does not exist")
  void indistinguishableFromMissing(ObjectEndpoint endpoint) {
    UUID missing = UUID.randomUUID();
    HttpResponse<Buffer> forA = endpoint.call().apply(b, docA);
    HttpResponse<Buffer> forMissing = endpoint.call().apply(b, missing);

    assertThat(forA.statusCode()).as(forA.bodyAsString()).isEqualTo(forMissing.statusCode());
    assertThat(forA.getHeader("Content-Type")).isEqualTo(forMissing.getHeader("Content-Type"));
    assertThat(forA.bodyAsString())
        .isEqualTo(forMissing.bodyAsString().replace(missing.toString(), docA.toString()));
    assertThat(forA.bodyAsString()).doesNotContain(SECRET);
    assertAUntouched();
  }

  @Test
  @DisplayName("B's document list and searches show nothing of A's, even for A's own words")
  void listAndSearch() {
    String list = b.get("/v1/documents").send().await().bodyAsString();
    assertThat(list).doesNotContain(docA.toString()).doesNotContain("secret.md");
    HttpResponse<Buffer> search = b.post("/v1/search")
        .sendJsonObject(new JsonObject().put("query", SECRET + " acquisition price 41m").put("limit", 50)).await();
    assertThat(search.statusCode()).isEqualTo(200);
    assertThat(search.bodyAsString()).doesNotContain(SECRET).doesNotContain(docA.toString());
    // A's own search does find it: the query is a fair one.
    assertThat(a.post("/v1/search").sendJsonObject(new JsonObject().put("query", SECRET + " acquisition"))
        .await().bodyAsString()).contains(docA.toString());
  }

  @Test
  @DisplayName("B uploading A's exact bytes under A's uri gets a new document of its own, not A's id or 'unchanged'")
  void sameBytesDoNotRevealOrReplace() {
    HttpResponse<Buffer> created = b.post("/v1/documents").sendJsonObject(new JsonObject()
        .put("uri", "memos/secret.md").put("content_type", "text/markdown").put("content", A_MARKDOWN)).await();
    assertThat(created.statusCode()).isEqualTo(201);
    JsonObject body = created.bodyAsJsonObject();
    assertThat(body.getString("status")).isEqualTo("created");
    assertThat(body.getString("id")).isNotEqualTo(docA.toString());
    b.delete("/v1/documents/" + body.getString("id")).send().await();
    assertAUntouched();
  }

  @Test
  @DisplayName("B's /documents directory holds only B's documents")
  void documentsFilesystem() throws Exception {
    Path root = gateway.dataDir().resolve("documents");
    Path bDir = root.resolve(tenantB.toString());
    assertThat(Files.isDirectory(bDir)).isTrue();
    try (Stream<Path> entries = Files.walk(bDir)) {
      List<Path> all = entries.toList();
      assertThat(all).noneMatch(p -> p.getFileName().toString().equals(docA.toString()));
      for (Path p : all) {
        if (Files.isRegularFile(p)) {
          assertThat(Files.readString(p)).doesNotContain(SECRET);
        }
      }
    }
    assertThat(Files.isDirectory(root.resolve(tenantA.toString()).resolve(docA.toString()))).isTrue();
  }

  private void assertAUntouched() {
    HttpResponse<Buffer> still = a.get("/v1/documents/" + docA + "/content").send().await();
    assertThat(still.statusCode()).isEqualTo(200);
    assertThat(still.bodyAsString()).isEqualTo(contentA);
  }
}
