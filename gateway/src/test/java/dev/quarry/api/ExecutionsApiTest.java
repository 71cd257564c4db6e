package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.dockerjava.api.DockerClient;
import dev.quarry.sandbox.ContainerLauncher;
import dev.quarry.sandbox.RunnerImage;
import dev.quarry.sandbox.SandboxLimits;
import dev.quarry.sandbox.SandboxSettings;
import dev.quarry.tenancy.Tenants;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayName("POST /v1/executions and the gateway's callbacks")
class ExecutionsApiTest {
  @TempDir static Path tmp;
  static TestGateway gateway;
  static DockerClient docker;
  static SandboxSettings settings;
  static String pierId;
  static String ferryId;

  @BeforeAll
  static void setUp() throws Exception {
    String image = RunnerImage.ensure();
    Path runRoot = Files.createDirectories(tmp.resolve("run"));
    settings = new SandboxSettings(SandboxSettings.DEFAULT_DOCKER_HOST, image, List.of(), "",
        "test-" + UUID.randomUUID().toString().substring(0, 8), runRoot, SandboxLimits.DEFAULTS,
        SandboxLimits.MAXIMUMS, 0, Duration.ofMinutes(10), false);
    docker = ContainerLauncher.connect(SandboxSettings.DEFAULT_DOCKER_HOST);
    gateway = TestGateway.start(settings);
    pierId = ingest("Tollan pier notes", "notes://pier",
        "# Tollan pier\n\nThe Tollan pier was rebuilt in 1912 after the storm tide.\n");
    ferryId = ingest("Harbour ferries", "notes://ferries",
        "# Ferries\n\nHarbour ferries leave the pier every twenty minutes in summer.\n");
  }

  static String ingest(String title, String uri, String markdown) {
    JsonObject body = new JsonObject().put("title", title).put("uri", uri).put("content", markdown)
        .put("content_type", "text/markdown");
    HttpResponse<Buffer> r = gateway.client().post("/v1/documents").sendJsonObject(body).await();
    assertThat(r.statusCode()).as(r.bodyAsString()).isEqualTo(201);
    return r.bodyAsJsonObject().getString("id");
  }

  @AfterAll
  static void tearDown() throws Exception {
    if (gateway != null) {
      gateway.close();
    }
    assertNothingLeft();
    docker.close();
  }

  @AfterEach
  void nothingLeft() throws Exception {
    assertNothingLeft();
  }

  static void assertNothingLeft() throws Exception {
    assertThat(docker.listContainersCmd().withShowAll(true)
        .withLabelFilter(Map.of(ContainerLauncher.LABEL_GATEWAY, settings.gatewayId())).exec()).isEmpty();
    assertThat(runDirectories()).as("run directories").isEmpty();
  }

  static JsonObject execute(JsonObject body) {
    HttpResponse<Buffer> r = gateway.client().post("/v1/executions").sendJsonObject(body).await();
    assertThat(r.statusCode()).as(r.bodyAsString()).isEqualTo(200);
    assertThat(r.getHeader("Content-Type")).startsWith("application/json");
    return r.bodyAsJsonObject();
  }

  /** Runs code that prints one JSON value and returns that value. */
  static Object printed(String code, JsonArray documentIds) {
    JsonObject body = new JsonObject().put("code", "import json\n" + code);
    if (documentIds != null) {
      body.put("document_ids", documentIds);
    }
    JsonObject result = execute(body);
    assertThat(result.getBoolean("success")).as(result.encodePrettily()).isTrue();
    return io.vertx.core.json.Json.decodeValue(result.getString("stdout"));
  }

  static JsonArray apiSearch(String query, int limit, JsonArray documentIds) {
    JsonObject body = new JsonObject().put("query", query).put("limit", limit);
    if (documentIds != null) {
      body.put("document_ids", documentIds);
    }
    HttpResponse<Buffer> r = gateway.client().post("/v1/search").sendJsonObject(body).await();
    assertThat(r.statusCode()).isEqualTo(200);
    return r.bodyAsJsonObject().getJsonArray("results");
  }

  @Test
  @DisplayName("returns the tool result: output, REPL value, no error")
  void toolResult() {
    JsonObject result = execute(new JsonObject().put("code", "print('hello')\n21 * 2"));
    assertThat(result.fieldNames()).containsExactly("success", "stdout", "stderr", "error", "truncated",
        "duration_ms");
    assertThat(result.getBoolean("success")).isTrue();
    assertThat(result.getString("stdout")).isEqualTo("hello\n42");
    assertThat(result.getValue("error")).isNull();
    assertThat(result.getBoolean("truncated")).isFalse();
  }

  @Test
  @DisplayName("reports a failing program as a typed error with its traceback, with status 200")
  void failingProgram() {
    JsonObject result = execute(new JsonObject().put("code", "x = 1\nraise ValueError('bad value')"));
    assertThat(result.getBoolean("success")).isFalse();
    assertThat(result.getJsonObject("error").getString("type")).isEqualTo("ValueError");
    assertThat(result.getJsonObject("error").getString("message")).isEqualTo("bad value");
    assertThat(result.getJsonObject("error").getString("traceback")).contains("line 2");
  }

  @Test
  @DisplayName("search() in the sandbox returns exactly what POST /v1/search returns")
  void searchCallback() {
    Object inSandbox = printed("print(json.dumps(await search('Tollan pier storm', limit=5)))", null);
    JsonArray api = apiSearch("Tollan pier storm", 5, null);
    assertThat(api).isNotEmpty();
    assertThat(inSandbox).isEqualTo(api);
  }

  @Test
  @DisplayName("an execution's callbacks past limits.callbacks raise LimitExceeded in the code, whatever their kind")
  void callbackBudget() {
    JsonObject result = execute(new JsonObject().put("code", """
        made = 0
        try:
            for i in range(10):
                if i % 2:
                    await list_documents()
                else:
                    await search('pier', limit=1)
                made += 1
        except LimitExceeded as e:
            print(made, e)
        """).put("limits", new JsonObject().put("callbacks", 3)));
    assertThat(result.getBoolean("success")).as(result.encode()).isTrue();
    assertThat(result.getString("stdout")).startsWith("3 this execution has used all of its 3 callbacks");
  }

  @Test
  @DisplayName("limits.callbacks and limits.wall_time_ms outside their bounds are refused with a 400 naming the field")
  void limitsOutOfBounds() {
    for (JsonObject limits : List.of(new JsonObject().put("callbacks", 0),
        new JsonObject().put("callbacks", settings.fairness().maxExecutionCallbacks() + 1),
        new JsonObject().put("callbacks", "many"),
        new JsonObject().put("wall_time_ms", settings.maxLimits().cellWallTime().toMillis() + 1))) {
      HttpResponse<Buffer> r = gateway.client().post("/v1/executions")
          .sendJsonObject(new JsonObject().put("code", "1").put("limits", limits)).await();
      assertThat(r.statusCode()).as(limits.encode()).isEqualTo(400);
      assertThat(r.bodyAsJsonObject().getJsonObject("error").getString("message"))
          .contains("limits." + limits.fieldNames().iterator().next());
    }
  }

  @Test
  @DisplayName("llm() without a configured model raises RuntimeError saying so")
  void llmUnconfigured() {
    JsonObject result = execute(new JsonObject().put("code", """
        try:
            await llm('hello')
        except RuntimeError as e:
            print(e)
        """));
    assertThat(result.getString("stdout")).contains("no model endpoint is configured");
  }

  @Test
  @DisplayName("list_documents() lists id, title, uri and created_at of the tenant's documents")
  void listDocuments() {
    JsonArray listed = (JsonArray) printed("print(json.dumps(await list_documents()))", null);
    JsonArray api = gateway.client().get("/v1/documents").send().await().bodyAsJsonObject()
        .getJsonArray("documents");
    assertThat(listed).hasSize(api.size());
    for (int i = 0; i < api.size(); i++) {
      JsonObject d = api.getJsonObject(i);
      assertThat(listed.getJsonObject(i)).isEqualTo(new JsonObject().put("id", d.getString("id"))
          .put("title", d.getString("title")).put("uri", d.getString("uri"))
          .put("created_at", d.getString("created_at")));
    }
  }

  @Test
  @DisplayName("/documents in the sandbox holds exactly the DocumentsFs export of the tenant")
  void documentsDirectory() throws Exception {
    JsonObject seen = (JsonObject) printed("""
        from pathlib import Path
        out = {}
        for d in Path('/documents').iterdir():
            for f in d.iterdir():
                out[d.name + '/' + f.name] = f.read_text()
        print(json.dumps(out))
        """, null);
    assertThat(seen.getMap()).isEqualTo(export(List.of(pierId, ferryId)));
  }

  static Map<String, Object> export(List<String> ids) throws Exception {
    Path tenantDir = gateway.dataDir().resolve("documents").resolve(Tenants.DEFAULT.toString());
    Map<String, Object> files = new java.util.HashMap<>();
    for (String id : ids) {
      try (Stream<Path> s = Files.list(tenantDir.resolve(id))) {
        for (Path f : s.toList()) {
          files.put(id + "/" + f.getFileName(), Files.readString(f));
        }
      }
    }
    assertThat(files).isNotEmpty();
    return files;
  }

  @Test
  @DisplayName("document_ids scopes list_documents, search and /documents")
  void scope() throws Exception {
    JsonArray only = new JsonArray().add(pierId);
    JsonArray listed = (JsonArray) printed("print(json.dumps(await list_documents()))", only);
    assertThat(listed).hasSize(1);
    assertThat(listed.getJsonObject(0).getString("id")).isEqualTo(pierId);

    JsonArray hits = (JsonArray) printed("print(json.dumps(await search('harbour ferries pier', limit=10)))", only);
    assertThat(hits).isNotEmpty();
    assertThat(hits).allSatisfy(h -> assertThat(((JsonObject) h).getString("document_id")).isEqualTo(pierId));
    assertThat(hits).isEqualTo(apiSearch("harbour ferries pier", 10, only));

    JsonArray names = (JsonArray) printed("""
        from pathlib import Path
        print(json.dumps(sorted(p.name for p in Path('/documents').iterdir())))
        """, only);
    assertThat(names).containsExactly(pierId);
    JsonObject files = (JsonObject) printed("""
        from pathlib import Path
        d = Path('/documents') / '%s'
        print(json.dumps({d.name + '/' + f.name: f.read_text() for f in d.iterdir()}))
        """.formatted(pierId), only);
    assertThat(files.getMap()).isEqualTo(export(List.of(pierId)));
  }

  @Test
  @DisplayName("refuses bad input with 400 naming the field")
  void badInput() {
    record Case(JsonObject body, String field) {}
    List<Case> cases = List.of(
        new Case(new JsonObject(), "'code'"),
        new Case(new JsonObject().put("code", 3), "'code'"),
        new Case(new JsonObject().put("code", " "), "'code'"),
        new Case(new JsonObject().put("code", "1").put("document_ids", "x"), "'document_ids'"),
        new Case(new JsonObject().put("code", "1").put("document_ids", new JsonArray().add("nope")),
            "'document_ids[0]'"),
        new Case(new JsonObject().put("code", "1").put("limits", 5), "'limits'"),
        new Case(new JsonObject().put("code", "1").put("limits", new JsonObject().put("wall_time_ms", 0)),
            "'limits.wall_time_ms'"),
        new Case(new JsonObject().put("code", "1").put("limits", new JsonObject().put("wall_time_ms", "5")),
            "'limits.wall_time_ms'"),
        new Case(new JsonObject().put("code", "1").put("limits",
            new JsonObject().put("max_output_chars", 1_000_000_000L)), "'limits.max_output_chars'"),
        new Case(new JsonObject().put("code", "1").put("stream", "yes"), "'stream'"));
    for (Case c : cases) {
      HttpResponse<Buffer> r = gateway.client().post("/v1/executions").sendJsonObject(c.body()).await();
      assertThat(r.statusCode()).as(c.body().encode()).isEqualTo(400);
      assertThat(r.bodyAsJsonObject().getJsonObject("error").getString("message")).as(c.body().encode())
          .contains(c.field());
    }
    HttpResponse<Buffer> notJson = gateway.client().post("/v1/executions").sendBuffer(Buffer.buffer("{")).await();
    assertThat(notJson.statusCode()).isEqualTo(400);
  }

  @Test
  @DisplayName("streams output events as they come, then exactly one result event")
  void serverSentEvents() throws Exception {
    HttpClient http = gateway.vertx().createHttpClient();
    try {
      String code = "print('first')\nawait list_documents()\nprint('second')\n'done'";
      HttpClientRequest request = http.request(new RequestOptions().setMethod(HttpMethod.POST)
          .setHost("localhost").setPort(gateway.port()).setURI("/v1/executions")
          .putHeader("Accept", "text/event-stream").putHeader("Content-Type", "application/json")
          .putHeader("Authorization", "Bearer " + gateway.apiKey())).await();
      // Body reading starts with the head, on the event loop: no chunk can slip by unread.
      io.vertx.core.Future<HttpClientResponse> head = request.response();
      io.vertx.core.Future<Buffer> body = head.compose(HttpClientResponse::body);
      request.send(new JsonObject().put("code", code).encode());
      HttpClientResponse response = head.await();
      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.getHeader("Content-Type")).startsWith("text/event-stream");
      List<String[]> events = parseEvents(body.await().toString());
      assertThat(events).isNotEmpty();
      assertThat(events.stream().filter(e -> e[0].equals("result")).count()).isEqualTo(1);
      assertThat(events.get(events.size() - 1)[0]).isEqualTo("result");
      StringBuilder streamed = new StringBuilder();
      for (String[] e : events.subList(0, events.size() - 1)) {
        assertThat(e[0]).isEqualTo("output");
        streamed.append(new JsonObject(e[1]).getString("text"));
      }
      // "first" was flushed before the callback: it came in its own event, ahead of the rest.
      assertThat(events.size()).isGreaterThanOrEqualTo(3);
      assertThat(new JsonObject(events.get(0)[1]).getString("text")).isEqualTo("first\n");
      JsonObject result = new JsonObject(events.get(events.size() - 1)[1]);
      assertThat(result.getBoolean("success")).isTrue();
      assertThat(streamed.toString()).isEqualTo(result.getString("stdout")).isEqualTo("first\nsecond\n'done'");
    } finally {
      http.close().await();
    }
  }

  static List<String[]> parseEvents(String body) {
    List<String[]> events = new ArrayList<>();
    for (String block : body.split("\n\n")) {
      if (block.isBlank()) {
        continue;
      }
      String name = null;
      String data = null;
      for (String line : block.split("\n")) {
        if (line.startsWith("event: ")) {
          name = line.substring(7);
        } else if (line.startsWith("data: ")) {
          data = line.substring(6);
        }
      }
      events.add(new String[] {name, data});
    }
    return events;
  }

  @Test
  @DisplayName("removes the sandbox when the client goes away mid-run")
  void clientGone() throws Exception {
    HttpClient http = gateway.vertx().createHttpClient();
    try {
      HttpClientRequest request = http.request(new RequestOptions().setMethod(HttpMethod.POST)
          .setHost("localhost").setPort(gateway.port()).setURI("/v1/executions")
          .putHeader("Accept", "text/event-stream").putHeader("Content-Type", "application/json")
          .putHeader("Authorization", "Bearer " + gateway.apiKey())).await();
      CompletableFuture<Void> started = new CompletableFuture<>();
      // The handler is in place before the first chunk can arrive (on the event loop, with the head).
      request.response().onSuccess(response -> response.handler(chunk -> {
        if (chunk.toString().contains("started")) {
          started.complete(null);
        }
      }));
      request.send(new JsonObject()
          .put("code", "print('started')\nawait list_documents()\nwhile True:\n    pass")
          .put("limits", new JsonObject().put("wall_time_ms", 120_000)).encode());
      started.get(60, TimeUnit.SECONDS);
      assertThat(containers()).hasSize(1);
      request.connection().close().await();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      // The container goes first, then its run directory: wait for both (nothingLeft checks them).
      while ((!containers().isEmpty() || !runDirectories().isEmpty()) && System.nanoTime() < deadline) {
        Thread.onSpinWait();
      }
      assertThat(containers()).isEmpty();
      assertThat(runDirectories()).isEmpty();
    } finally {
      http.close().await();
    }
  }

  static List<Path> runDirectories() throws java.io.IOException {
    Path dir = settings.runRoot().resolve(settings.gatewayId());
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(dir)) {
      return s.toList();
    }
  }

  static List<?> containers() {
    return docker.listContainersCmd().withShowAll(true)
        .withLabelFilter(Map.of(ContainerLauncher.LABEL_GATEWAY, settings.gatewayId())).exec();
  }
}
