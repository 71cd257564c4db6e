package dev.quarry.agent;

import static dev.quarry.agent.ScriptedModelServer.answer;
import static dev.quarry.agent.ScriptedModelServer.execute;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.support.HostPathGrep;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.multipart.MultipartForm;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Every error path that can be driven from outside, with the host's filesystem failing under the
 * gateway: the sandboxes' run directory read-only or out of inodes (a tiny tmpfs mounted over it),
 * the documents directory read-only, the uploads directory read-only; and through every surface that
 * reports them: executions (plain and streamed), analyses (their answer, their record, their event
 * stream, the rows stored), replays, the OpenAI-compatible endpoint and MCP's tools. Every response
 * body and every stored analysis row and event is grepped for the gateway's roots (data, run,
 * documents, uploads directories), the JVM's temporary, working and home directories, and the
 * prefixes {@code /tmp/}, {@code /var/}, {@code /work/}, {@code /home/}, {@code /root/}: none may
 * hold one. Before, the run directory's path came back in every sandbox failure (issue 33).
 */
@DisplayName("No host path in any answer or stored analysis, on every error path that can be driven")
class HostPathLeakTest {
  static AgentHarness h;
  static HostPathGrep grep;
  static Path runRoot;
  static UUID succeeded;
  static String mcpSession;
  static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
  /** What the client was shown or the database holds, each with where it came from. */
  final List<String[]> seen = new ArrayList<>();
  final List<Path> mounted = new ArrayList<>();

  @BeforeAll
  static void start() throws Exception {
    h = new AgentHarness(false);
    Path data = h.gateway.dataDir();
    runRoot = data.resolve("run");
    grep = new HostPathGrep(data, runRoot, data.resolve("documents"), data.resolve("uploads"));
    h.ingest("docling/html/wiki_duck.html");
    h.model.then(execute("print('ok')"), answer("fine", "print('ok')"));
    succeeded = UUID.fromString(h.post("/v1/analyses", new JsonObject().put("question", "ok?"))
        .bodyAsJsonObject().getString("id"));
    assertThat(h.awaitEnd(succeeded).getString("status")).isEqualTo("succeeded");
    h.model.reset();
    mcpSession = mcp(null, new JsonObject().put("jsonrpc", "2.0").put("id", 0).put("method", "initialize")
        .put("params", new JsonObject().put("protocolVersion", "2025-06-18").put("capabilities", new JsonObject())
            .put("clientInfo", new JsonObject().put("name", "leaks").put("version", "1"))))
        .headers().firstValue("Mcp-Session-Id").orElseThrow();
  }

  @AfterAll
  static void stop() throws Exception {
    h.close();
  }

  @AfterEach
  void unmount() throws Exception {
    for (int i = mounted.size() - 1; i >= 0; i--) {
      run("umount", "-l", mounted.get(i).toString());
    }
    mounted.clear();
    h.model.reset();
  }

  @Test
  @DisplayName("the run directory read-only: executions, analyses, replays, OpenAI and MCP tools")
  void readOnlyRunDirectory() throws Exception {
    mount(runRoot, "ro,size=1m");
    everySandboxSurface();
    assertSeenAndClean("Read-only file system");
  }

  @Test
  @DisplayName("the run directory out of inodes (a tiny tmpfs): the sandbox's socket and scoped documents")
  void fullRunDirectory() throws Exception {
    mount(runRoot, "size=64k,nr_inodes=3");
    everySandboxSurface();
    assertSeenAndClean("No space left on device");
  }

  @Test
  @DisplayName("the documents directory read-only: executions and analyses, whose sandboxes cannot be given it")
  void readOnlyDocumentsDirectory() throws Exception {
    // A new document first, so that its directory is not there yet when the mount hides the others.
    mount(h.gateway.dataDir().resolve("documents"), "ro,size=1m");
    record("ingest", h.post("/v1/documents", new JsonObject().put("uri", "leak.md").put("content_type",
        "text/markdown").put("content", "# Leak\n\nA document written while its directory is read-only.\n")));
    everySandboxSurface();
    assertSeenAndClean("Read-only file system");
  }

  @Test
  @DisplayName("the uploads directory read-only: a multipart upload")
  void readOnlyUploads() throws Exception {
    mount(h.gateway.dataDir().resolve("uploads"), "ro,size=1m");
    MultipartForm form = MultipartForm.create().binaryFileUpload("file", "a.md",
        Buffer.buffer("# A\n\nText.\n"), "text/markdown");
    record("upload", h.gateway.client().post("/v1/documents").sendMultipartForm(form).await());
    assertSeenAndClean("");
  }

  @Test
  @DisplayName("the uploads directory full (a tiny tmpfs): a multipart upload larger than what is left")
  void fullUploads() throws Exception {
    mount(h.gateway.dataDir().resolve("uploads"), "size=16k");
    MultipartForm form = MultipartForm.create().binaryFileUpload("file", "big.md",
        Buffer.buffer("# Big\n\n" + "All work and no play. ".repeat(5_000)), "text/markdown");
    record("upload", h.gateway.client().post("/v1/documents").sendMultipartForm(form).await());
    assertSeenAndClean("");
    assertThat(h.gateway.leftoverUploads()).as("upload files left").isZero();
  }

  @Test
  @DisplayName("malformed and missing things: bad ids, bad JSON, unknown documents, a replay of nothing")
  void malformedAndMissing() throws Exception {
    record("bad id", h.get("/v1/documents/not-a-uuid"));
    record("missing document", h.get("/v1/documents/" + UUID.randomUUID() + "/content"));
    record("missing analysis", h.get("/v1/analyses/" + UUID.randomUUID()));
    record("replay of nothing", h.post("/v1/analyses/" + UUID.randomUUID() + "/replay", new JsonObject()));
    record("bad JSON", h.gateway.client().post("/v1/search").putHeader("Content-Type", "application/json")
        .sendBuffer(Buffer.buffer("{\"query\": /tmp/x")).await());
    record("execution without code", h.post("/v1/executions", new JsonObject()));
    record("a program reading a missing file", h.post("/v1/executions", new JsonObject().put("code",
        "print(open('/documents/nope/content.txt').read())")));
    assertSeenAndClean("");
  }

  /** Executions (plain, streamed, scoped), an analysis, a replay, a chat completion, MCP's run_code and ask. */
  private void everySandboxSurface() throws Exception {
    record("execution", h.post("/v1/executions", new JsonObject().put("code", "print(1)")));
    record("scoped execution", h.post("/v1/executions", new JsonObject().put("code", "print(1)")
        .put("document_ids", new JsonArray().add(firstDocument()))));
    record("streamed execution", stream("/v1/executions", new JsonObject().put("code", "print(1)")));
    HttpResponse<Buffer> analysis = h.post("/v1/analyses", new JsonObject().put("question", "why?"));
    record("analysis", analysis);
    String id = analysis.bodyAsJsonObject().getString("id");
    record("analysis record", h.get("/v1/analyses/" + id));
    record("analysis events", h.get("/v1/analyses/" + id + "/events"));
    record("streamed analysis", stream("/v1/analyses", new JsonObject().put("question", "and now?")
        .put("document_ids", new JsonArray().add(firstDocument()))));
    record("replay", h.post("/v1/analyses/" + succeeded + "/replay", new JsonObject()));
    record("chat completion", h.post("/v1/chat/completions", new JsonObject().put("model", "quarry")
        .put("messages", new JsonArray().add(new JsonObject().put("role", "user").put("content", "why?")))));
    record("MCP run_code", mcp(mcpSession, tool("run_code", new JsonObject().put("code", "print(1)"))).body());
    record("MCP ask", mcp(mcpSession, tool("ask", new JsonObject().put("question", "why?"))).body());
  }

  private String firstDocument() {
    return h.get("/v1/documents").bodyAsJsonObject().getJsonArray("documents").getJsonObject(0).getString("id");
  }

  private void record(String where, HttpResponse<Buffer> r) {
    seen.add(new String[] {where + " (" + r.statusCode() + ")", r.bodyAsString()});
  }

  private void record(String where, String body) {
    seen.add(new String[] {where, body});
  }

  /**
   * Every answer recorded and every stored analysis, step and event, grepped; {@code cause} (the
   * filesystem's reason) must show in some answer, so that the path was really taken.
   */
  private void assertSeenAndClean(String cause) throws Exception {
    try (Connection c = h.gateway.database().jdbc(); Statement s = c.createStatement()) {
      for (String table : List.of("analyses", "analysis_steps", "analysis_events")) {
        try (ResultSet rs = s.executeQuery("SELECT t::text FROM " + table + " t")) {
          while (rs.next()) {
            seen.add(new String[] {"stored in " + table, rs.getString(1)});
          }
        }
      }
    }
    List<String> leaks = new ArrayList<>();
    for (String[] s : seen) {
      List<String> found = grep.in(s[1]);
      if (!found.isEmpty()) {
        leaks.add(s[0] + " holds " + found + ": " + (s[1].length() > 400 ? s[1].substring(0, 400) + "…" : s[1]));
      }
    }
    assertThat(leaks).isEmpty();
    if (!cause.isEmpty()) {
      assertThat(seen).as("some answer names the failure's reason").anyMatch(s -> s[1].contains(cause));
    }
    seen.clear();
  }

  private static String stream(String path, JsonObject body) throws Exception {
    java.net.http.HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(h.gateway.url() + path))
        .timeout(Duration.ofMinutes(2)).header("Accept", "text/event-stream")
        .header("Authorization", "Bearer " + h.gateway.apiKey()).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body.encode())).build(), BodyHandlers.ofString());
    return r.statusCode() + " " + r.body();
  }

  private static JsonObject tool(String name, JsonObject arguments) {
    return new JsonObject().put("jsonrpc", "2.0").put("id", UUID.randomUUID().toString()).put("method", "tools/call")
        .put("params", new JsonObject().put("name", name).put("arguments", arguments));
  }

  private static java.net.http.HttpResponse<String> mcp(String session, JsonObject message) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(h.gateway.url() + "/mcp")).timeout(Duration.ofMinutes(2))
        .header("Authorization", "Bearer " + h.gateway.apiKey()).header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream").POST(HttpRequest.BodyPublishers.ofString(message.encode()));
    if (session != null) {
      b.header("Mcp-Session-Id", session);
    }
    return http.send(b.build(), BodyHandlers.ofString());
  }

  /** A tmpfs of its own over {@code dir} for the test (the tests run as root, as ./quarry test does). */
  private void mount(Path dir, String options) throws Exception {
    Files.createDirectories(dir);
    run("mount", "-t", "tmpfs", "-o", options, "tmpfs", dir.toString());
    mounted.add(dir);
  }

  private static void run(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IOException(String.join(" ", command) + " failed: " + out);
    }
  }
}
