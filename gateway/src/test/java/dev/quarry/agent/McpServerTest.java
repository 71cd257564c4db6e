package dev.quarry.agent;

import static dev.quarry.agent.ScriptedModelServer.answer;
import static dev.quarry.agent.ScriptedModelServer.execute;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quarry.api.TestGateway;
import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * Quarry as an MCP server over Streamable HTTP at /mcp, called by the MCP Java SDK's own client
 * over real HTTP: the real gateway, real sandboxes, the scripted model behind {@code ask}.
 */
@DisplayName("The MCP server at /mcp, called by the MCP Java SDK's client")
class McpServerTest {
  static AgentHarness h;
  static UUID duck;
  static TestGateway.NewTenant other;
  static UUID othersDocument;
  static final List<McpSchema.ProgressNotification> progress = new CopyOnWriteArrayList<>();
  static McpSyncClient client;

  @BeforeAll
  static void start() throws Exception {
    h = new AgentHarness(false);
    duck = h.ingest("docling/html/wiki_duck.html");
    other = h.gateway.createTenant("mcp-other");
    var created = h.gateway.clientFor(other.apiKey()).post("/v1/documents").sendJsonObject(new JsonObject()
        .put("title", "Other's secret").put("uri", "secret.txt").put("content", "CANARY-MCP-OTHER ducks")
        .put("content_type", "text/plain")).await();
    assertThat(created.statusCode()).isEqualTo(201);
    othersDocument = UUID.fromString(created.bodyAsJsonObject().getString("id"));
    client = connect(h.gateway.apiKey(), progress);
  }

  static McpSyncClient connect(String key, List<McpSchema.ProgressNotification> sink) {
    var transport = HttpClientStreamableHttpTransport.builder(h.gateway.url()).endpoint("/mcp")
        .requestBuilder(HttpRequest.newBuilder().header("Authorization", "Bearer " + key)).build();
    McpSyncClient c = McpClient.sync(transport).requestTimeout(Duration.ofMinutes(2))
        .progressConsumer(sink::add).build();
    c.initialize();
    return c;
  }

  @AfterAll
  static void stop() throws Exception {
    client.closeGracefully();
    h.close();
  }

  @AfterEach
  void nothingLeft() throws Exception {
    h.model.reset();
    h.assertNoSandboxes();
  }

  private static McpSchema.CallToolResult call(McpSyncClient c, String tool, Map<String, Object> args) {
    return c.callTool(new McpSchema.CallToolRequest(tool, args));
  }

  private static String text(McpSchema.CallToolResult r) {
    return ((McpSchema.TextContent) r.content().get(0)).text();
  }

  private static JsonObject structured(McpSchema.CallToolResult r) {
    @SuppressWarnings("unchecked")
    Map<String, Object> m = (Map<String, Object>) r.structuredContent();
    return new JsonObject(m);
  }

  @Test
  @DisplayName("the tools are listed, each with a JSON schema of its input")
  void tools() {
    var tools = client.listTools().tools();
    assertThat(tools).extracting(McpSchema.Tool::name)
        .containsExactlyInAnyOrder("search", "list_documents", "read_document", "run_code", "ask");
    for (McpSchema.Tool t : tools) {
      assertThat(t.inputSchema().get("type")).isEqualTo("object");
      assertThat(t.inputSchema().get("properties")).isInstanceOf(Map.class);
      assertThat(t.description()).isNotBlank();
    }
    assertThat(client.getServerInfo().name()).isEqualTo("quarry");
  }

  @Test
  @DisplayName("ask with follows goes on from an earlier answer: its code finds the earlier code's variables")
  void askFollowsUp() {
    h.model.then(execute("kept = 'from the first question'"), answer("Kept.", "kept = 'from the first question'"));
    var first = call(client, "ask", Map.of("question", "Keep something?"));
    assertThat(first.isError()).isNotEqualTo(true);
    String id = structured(first).getString("analysis_id");
    h.model.then(execute("print(kept)"), answer("It was kept.", "print('from the first question')"));
    var next = call(client, "ask", Map.of("question", "What was kept?", "follows", id));
    assertThat(next.isError()).as(text(next)).isNotEqualTo(true);
    JsonObject stored = h.get("/v1/analyses/" + structured(next).getString("analysis_id")).bodyAsJsonObject();
    assertThat(stored.getString("follows")).isEqualTo(id);
    assertThat(stored.getJsonArray("steps").getJsonObject(0).getJsonObject("result").getString("stdout"))
        .isEqualTo("from the first question\n");
    assertThat(h.model.requests()).as("the first question's turns are not asked again").hasSize(4);
  }

  @Test
  @DisplayName("search, list and read answer what the REST API answers, for the caller's tenant only")
  void knowledgeBase() throws Exception {
    var hits = call(client, "search", Map.of("query", "duck feathers", "limit", 3));
    assertThat(hits.isError()).isNotEqualTo(true);
    JsonArray results = structured(hits).getJsonArray("results");
    assertThat(results).hasSizeBetween(1, 3);
    assertThat(results.getJsonObject(0).getString("document_id")).isEqualTo(duck.toString());
    assertThat(text(hits)).doesNotContain("CANARY-MCP-OTHER");

    var listed = structured(call(client, "list_documents", Map.of()));
    assertThat(listed.getJsonArray("documents").stream().map(d -> ((JsonObject) d).getString("id")))
        .contains(duck.toString()).doesNotContain(othersDocument.toString());

    var content = call(client, "read_document", Map.of("document_id", duck.toString(), "max_chars", 100));
    JsonObject slice = structured(content);
    assertThat(slice.getString("text")).hasSize(100);
    assertThat(slice.getInteger("next_offset")).isEqualTo(100);
    String whole = h.get("/v1/documents/" + duck + "/content").bodyAsString();
    assertThat(slice.getString("text")).isEqualTo(whole.substring(0, 100));
    var next = structured(call(client, "read_document", Map.of("document_id", duck.toString(), "offset", 100,
        "max_chars", 50)));
    assertThat(next.getString("text")).isEqualTo(whole.substring(100, 150));
    var toc = structured(call(client, "read_document", Map.of("document_id", duck.toString(), "part", "toc")));
    assertThat(new JsonObject(toc.getString("text")).getString("doc_id")).isEqualTo(duck.toString());
    var items = structured(call(client, "read_document", Map.of("document_id", duck.toString(), "part", "items",
        "max_chars", 200_000)));
    assertThat(new JsonObject(items.getString("text").split("\n")[0]).containsKey("self_ref")).isTrue();
  }

  @Test
  @DisplayName("run_code runs in a sandbox of the caller's tenant; a failing program is the tool's error")
  void runCode() {
    var ran = call(client, "run_code", Map.of("code", "docs = await list_documents()\nprint(len(docs))"));
    assertThat(ran.isError()).isNotEqualTo(true);
    assertThat(structured(ran).getString("stdout")).isEqualTo("1\n");
    var failed = call(client, "run_code", Map.of("code", "1/0"));
    assertThat(failed.isError()).isTrue();
    assertThat(structured(failed).getJsonObject("error").getString("type")).isEqualTo("ZeroDivisionError");
  }

  @Test
  @DisplayName("ask runs an analysis, stored like any other, with progress notifications for its steps")
  void ask() {
    progress.clear();
    h.model.then(execute("print('thinking')"), answer("Ducks swim.", "print('thinking')"));
    // The async client's consumer runs as each notification arrives, in the order they arrive; the sync
    // client's runs each on a thread of its own (the SDK's boundedElastic), in no set order, which
    // shows once an analysis' events come in stored batches.
    var transport = HttpClientStreamableHttpTransport.builder(h.gateway.url()).endpoint("/mcp")
        .requestBuilder(HttpRequest.newBuilder().header("Authorization", "Bearer " + h.gateway.apiKey())).build();
    McpAsyncClient inOrder = McpClient.async(transport).requestTimeout(Duration.ofMinutes(2))
        .progressConsumer(n -> Mono.fromRunnable(() -> progress.add(n))).build();
    inOrder.initialize().block();
    McpSchema.CallToolResult asked;
    try {
      asked = inOrder.callTool(McpSchema.CallToolRequest.builder("ask").arguments(Map.of("question", "Do ducks swim?"))
          .progressToken("p-1").build()).block();
    } finally {
      inOrder.closeGracefully().block();
    }
    assertThat(asked.isError()).isNotEqualTo(true);
    assertThat(text(asked)).isEqualTo("Ducks swim.");
    JsonObject s = structured(asked);
    assertThat(s.getString("program")).isEqualTo("print('thinking')");
    JsonObject stored = h.get("/v1/analyses/" + s.getString("analysis_id")).bodyAsJsonObject();
    assertThat(stored.getString("status")).isEqualTo("succeeded");
    assertThat(stored.getString("question")).isEqualTo("Do ducks swim?");
    assertThat(progress).extracting(McpSchema.ProgressNotification::progressToken).containsOnly("p-1");
    assertThat(progress).extracting(McpSchema.ProgressNotification::message)
        .anySatisfy(m -> assertThat(m).contains("print('thinking')"))
        .anySatisfy(m -> assertThat(m).contains("printed: thinking"));
    List<Double> steps = progress.stream().map(McpSchema.ProgressNotification::progress).toList();
    assertThat(steps).isSorted();
  }

  @Test
  @DisplayName("bad arguments get a tool error that names them; nothing reaches a handler with a path piece")
  void badArguments() {
    for (var bad : List.<Map.Entry<String, Map<String, Object>>>of(
        Map.entry("search", Map.of()),
        Map.entry("search", Map.of("query", "x", "frob", 1)),
        Map.entry("search", Map.of("query", "x", "limit", 0)),
        Map.entry("search", Map.of("query", "x", "limit", "ten")),
        Map.entry("read_document", Map.of("document_id", "../../admin/tenants")),
        Map.entry("read_document", Map.of("document_id", duck.toString(), "part", "secrets")),
        Map.entry("read_document", Map.of("document_id", duck.toString(), "max_chars", 0)),
        Map.entry("list_documents", Map.of("cursor", "not-a-cursor")),
        Map.entry("run_code", Map.of("code", "")),
        Map.entry("ask", Map.of("question", "  ")),
        Map.entry("ask", Map.of("question", "q", "follows", "not-an-id")),
        Map.entry("ask", Map.of("question", "q", "follows", UUID.randomUUID().toString())),
        Map.entry("ask", Map.of("question", "q", "budgets", Map.of("model_turns", -1))))) {
      var result = call(client, bad.getKey(), bad.getValue());
      assertThat(result.isError()).as(bad.toString()).isTrue();
      assertThat(text(result)).as(bad.toString()).isNotBlank().doesNotContain("Exception");
    }
    assertThat(h.model.requests()).isEmpty();
  }

  @Test
  @DisplayName("tenant fences: another tenant's documents are missing, its sessions unknown; no key, no MCP")
  void crossTenant() throws Exception {
    var missing = call(client, "read_document", Map.of("document_id", othersDocument.toString()));
    var nobody = call(client, "read_document", Map.of("document_id", UUID.randomUUID().toString()));
    assertThat(missing.isError()).isTrue();
    assertThat(text(missing).replace(othersDocument.toString(), "ID"))
        .isEqualTo(text(nobody).replaceAll("[0-9a-f-]{36}", "ID"));
    var scoped = call(client, "search", Map.of("query", "ducks", "document_ids", List.of(othersDocument.toString())));
    // As POST /v1/search answers it: a scope of documents the tenant does not have finds nothing.
    assertThat(scoped.isError()).isNotEqualTo(true);
    assertThat(structured(scoped).getJsonArray("results")).isEmpty();
    var ran = call(client, "run_code", Map.of("code", "print(len(await search('CANARY-MCP-OTHER')))"));
    assertThat(text(ran)).doesNotContain("CANARY-MCP-OTHER");

    // The other tenant, over MCP, sees only its own.
    McpSyncClient theirs = connect(other.apiKey(), new CopyOnWriteArrayList<>());
    try {
      var listed = structured(call(theirs, "list_documents", Map.of()));
      assertThat(listed.getJsonArray("documents")).hasSize(1);
      assertThat(text(call(theirs, "search", Map.of("query", "duck feathers")))).doesNotContain(duck.toString());
      assertThat(call(theirs, "read_document", Map.of("document_id", duck.toString())).isError()).isTrue();
    } finally {
      theirs.closeGracefully();
    }

    // A session is its tenant's: another key naming it is told it does not exist; no key is a 401.
    HttpClient http = HttpClient.newHttpClient();
    String init = new JsonObject().put("jsonrpc", "2.0").put("id", 1).put("method", "initialize").put("params",
        new JsonObject().put("protocolVersion", "2025-06-18").put("capabilities", new JsonObject())
            .put("clientInfo", new JsonObject().put("name", "raw").put("version", "1"))).encode();
    var opened = http.send(mcp(h.gateway.apiKey()).POST(HttpRequest.BodyPublishers.ofString(init)).build(),
        BodyHandlers.ofString());
    assertThat(opened.statusCode()).as(opened.body()).isEqualTo(200);
    String session = opened.headers().firstValue("Mcp-Session-Id").orElseThrow();
    String list = new JsonObject().put("jsonrpc", "2.0").put("id", 2).put("method", "tools/list").encode();
    var stolen = http.send(mcp(other.apiKey()).header("Mcp-Session-Id", session)
        .POST(HttpRequest.BodyPublishers.ofString(list)).build(), BodyHandlers.ofString());
    assertThat(stolen.statusCode()).as(stolen.body()).isEqualTo(404);
    var made = http.send(mcp(other.apiKey()).header("Mcp-Session-Id", UUID.randomUUID().toString())
        .POST(HttpRequest.BodyPublishers.ofString(list)).build(), BodyHandlers.ofString());
    assertThat(stolen.body().replace(session, "S")).isEqualTo(made.body().replaceAll("no MCP session [^;]*;", "no MCP session S;"));
    var anonymous = http.send(HttpRequest.newBuilder(URI.create(h.gateway.url() + "/mcp"))
        .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
        .POST(HttpRequest.BodyPublishers.ofString(init)).build(), BodyHandlers.ofString());
    assertThat(anonymous.statusCode()).isEqualTo(401);
    assertThatThrownBy(() -> connect("qk_000000000000_wrong", new CopyOnWriteArrayList<>())).isNotNull();
    var deleted = http.send(mcp(h.gateway.apiKey()).header("Mcp-Session-Id", session).DELETE().build(),
        BodyHandlers.ofString());
    assertThat(deleted.statusCode()).isEqualTo(204);
    var gone = http.send(mcp(h.gateway.apiKey()).header("Mcp-Session-Id", session)
        .POST(HttpRequest.BodyPublishers.ofString(list)).build(), BodyHandlers.ofString());
    assertThat(gone.statusCode()).isEqualTo(404);
  }

  @Test
  @DisplayName("a client that drops the connection of an ask cancels its analysis")
  void askCancelledWhenClientGoesAway() throws Exception {
    h.model.then(execute("n = 0\nwhile True:\n    n = n + 1"), answer("never", "print(1)"));
    HttpClient http = HttpClient.newHttpClient();
    String init = new JsonObject().put("jsonrpc", "2.0").put("id", 1).put("method", "initialize").put("params",
        new JsonObject().put("protocolVersion", "2025-06-18").put("capabilities", new JsonObject())
            .put("clientInfo", new JsonObject().put("name", "raw").put("version", "1"))).encode();
    var opened = http.send(mcp(h.gateway.apiKey()).POST(HttpRequest.BodyPublishers.ofString(init)).build(),
        BodyHandlers.ofString());
    String session = opened.headers().firstValue("Mcp-Session-Id").orElseThrow();
    http.send(mcp(h.gateway.apiKey()).header("Mcp-Session-Id", session).POST(HttpRequest.BodyPublishers.ofString(
        new JsonObject().put("jsonrpc", "2.0").put("method", "notifications/initialized").encode())).build(),
        BodyHandlers.ofString());
    byte[] call = new JsonObject().put("jsonrpc", "2.0").put("id", 2).put("method", "tools/call").put("params",
        new JsonObject().put("name", "ask").put("arguments", new JsonObject().put("question", "Forever?"))
            .put("_meta", new JsonObject().put("progressToken", "gone-1"))).encode()
        .getBytes(java.nio.charset.StandardCharsets.UTF_8);
    UUID id = null;
    try (java.net.Socket socket = new java.net.Socket("localhost", h.gateway.port())) {
      socket.setSoTimeout(120_000);
      var out = socket.getOutputStream();
      out.write(("POST /mcp HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + h.gateway.apiKey()
          + "\r\nMcp-Session-Id: " + session + "\r\nContent-Type: application/json\r\n"
          + "Accept: application/json, text/event-stream\r\nContent-Length: " + call.length + "\r\n\r\n")
          .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      out.write(call);
      out.flush();
      var in = new java.io.BufferedReader(new java.io.InputStreamReader(socket.getInputStream(),
          java.nio.charset.StandardCharsets.UTF_8));
      var started = java.util.regex.Pattern.compile("analysis ([0-9a-f-]{36}) started");
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        var m = started.matcher(line);
        if (m.find()) {
          id = UUID.fromString(m.group(1));
        }
        if (id != null && line.contains("running code")) {
          break;
        }
      }
    }
    assertThat(id).as("the ask's progress named its analysis").isNotNull();
    assertThat(h.awaitEnd(id).getString("status")).isEqualTo("cancelled");
  }

  private static HttpRequest.Builder mcp(String key) {
    return HttpRequest.newBuilder(URI.create(h.gateway.url() + "/mcp")).header("Authorization", "Bearer " + key)
        .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream");
  }
}
