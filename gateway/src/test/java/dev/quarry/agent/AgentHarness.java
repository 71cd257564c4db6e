package dev.quarry.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.api.TestGateway;
import dev.quarry.gateway.Gateway;
import dev.quarry.sandbox.ContainerLauncher;
import dev.quarry.sandbox.RunnerImage;
import dev.quarry.sandbox.SandboxLimits;
import dev.quarry.sandbox.SandboxSettings;
import dev.quarry.support.SharedData;
import dev.quarry.tenancy.Tenants;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.multipart.MultipartForm;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The whole gateway with analyses: real PostgreSQL, real sandboxes on the real engine with the
 * runner image of this checkout, the real openai-java client talking HTTP to the scripted model.
 */
public final class AgentHarness implements AutoCloseable {
  final Vertx vertx = Vertx.vertx();
  public final ScriptedModelServer model;
  public final TestGateway gateway;
  final String gatewayId = "agent-test-" + UUID.randomUUID().toString().substring(0, 8);
  private final HttpClient http = HttpClient.newHttpClient();

  public AgentHarness(boolean cancelOnDisconnect) throws IOException {
    this(cancelOnDisconnect, SandboxSettings.DEFAULT_MAX_ACTIVE, SandboxSettings.DEFAULT_MAX_WAIT);
  }

  /** With at most {@code maxActive} sandboxes, a request waiting up to {@code maxWait} for room. */
  public AgentHarness(boolean cancelOnDisconnect, int maxActive, Duration maxWait) throws IOException {
    this(cancelOnDisconnect, maxActive, maxWait, RunnerImage.ensure(), a -> a);
  }

  /** On a sandbox image of the test's own, with agent settings it adjusts. */
  public AgentHarness(String image, java.util.function.UnaryOperator<AgentSettings> adjust) throws IOException {
    this(false, SandboxSettings.DEFAULT_MAX_ACTIVE, SandboxSettings.DEFAULT_MAX_WAIT, image, adjust);
  }

  private AgentHarness(boolean cancelOnDisconnect, int maxActive, Duration maxWait, String image,
      java.util.function.UnaryOperator<AgentSettings> adjust) throws IOException {
    model = ScriptedModelServer.start(vertx);
    AgentSettings agent = adjust.apply(AgentSettings.fromEnv(Map.of())
        .withEndpoint(model.baseUrl(), "test-key", "scripted-model")
        .withRetries(3, Duration.ofMillis(20), Duration.ofMillis(200), 50, Duration.ofSeconds(30))
        .withCancelOnDisconnect(cancelOnDisconnect));
    gateway = TestGateway.startWithAgent(dataDir -> {
      try {
        Path runRoot = Files.createDirectories(dataDir.resolve("run"));
        SandboxSettings sandboxes = new SandboxSettings(SandboxSettings.DEFAULT_DOCKER_HOST, image, List.of(), "",
            gatewayId, runRoot, SandboxLimits.DEFAULTS, SandboxLimits.MAXIMUMS, 0, Duration.ofMinutes(10), false,
            maxActive, maxWait, SandboxSettings.Fairness.DEFAULTS.withTenantSharePercent(100));
        return new Gateway.AgentWiring(agent, sandboxes);
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    });
  }

  /** Ingests a file of ../shared/data and returns its document id. */
  public UUID ingest(String relative) throws IOException {
    Path file = SharedData.path(relative);
    MultipartForm form = MultipartForm.create().attribute("uri", relative)
        .binaryFileUpload("file", file.getFileName().toString(), Buffer.buffer(Files.readAllBytes(file)),
            "application/octet-stream");
    HttpResponse<Buffer> r = gateway.client().post("/v1/documents").sendMultipartForm(form).await();
    assertThat(r.statusCode()).as(r.bodyAsString()).isIn(200, 201);
    return UUID.fromString(r.bodyAsJsonObject().getString("id"));
  }

  HttpResponse<Buffer> post(String path, JsonObject body) {
    return gateway.client().post(path).sendJsonObject(body).await();
  }

  HttpResponse<Buffer> get(String path) {
    return gateway.client().get(path).send().await();
  }

  /** A whole SSE response as text (the stream ends after the terminal event). */
  String streamText(String method, String path, JsonObject body) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(gateway.url() + path))
        .timeout(Duration.ofMinutes(3)).header("Accept", "text/event-stream")
        .header("Authorization", "Bearer " + gateway.apiKey());
    request = body == null ? request.method(method, HttpRequest.BodyPublishers.noBody())
        : request.header("Content-Type", "application/json")
            .method(method, HttpRequest.BodyPublishers.ofString(body.encode()));
    java.net.http.HttpResponse<String> response = http.send(request.build(), BodyHandlers.ofString());
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    assertThat(response.headers().firstValue("content-type").orElse("")).startsWith("text/event-stream");
    return response.body();
  }

  /** The JSON of each {@code data:} line of an SSE text. */
  static List<JsonObject> events(String sse) {
    List<JsonObject> out = new ArrayList<>();
    for (String line : sse.split("\n")) {
      if (line.startsWith("data: ")) {
        out.add(new JsonObject(line.substring(6)));
      }
    }
    return out;
  }

  /**
   * Posts an analysis over a raw socket, reads its stream until an event matches, then drops the
   * connection: a client that goes away mid-stream. Returns the analysis id.
   */
  UUID postAndDisconnect(JsonObject body, Predicate<JsonObject> until) throws IOException {
    byte[] payload = body.encode().getBytes(StandardCharsets.UTF_8);
    try (Socket socket = new Socket("localhost", gateway.port())) {
      socket.setSoTimeout(120_000);
      OutputStream out = socket.getOutputStream();
      out.write(("POST /v1/analyses HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n"
          + "Authorization: Bearer " + gateway.apiKey() + "\r\n"
          + "Content-Type: application/json\r\nContent-Length: " + payload.length + "\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      out.write(payload);
      out.flush();
      BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
      UUID id = null;
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        if (line.regionMatches(true, 0, "X-Analysis-Id:", 0, 14)) {
          id = UUID.fromString(line.substring(14).trim());
        }
        int data = line.indexOf("data: ");
        if (data >= 0 && until.test(new JsonObject(line.substring(data + 6)))) {
          return id;
        }
      }
      throw new AssertionError("the stream ended before the awaited event");
    }
  }

  /** Waits for a running analysis to record its end (a real signal, with a time limit). */
  JsonObject awaitEnd(UUID id) throws Exception {
    var live = gateway.gateway().analyses().running(Tenants.DEFAULT, id);
    if (live.isPresent()) {
      live.get().finished().toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
    }
    return get("/v1/analyses/" + id).bodyAsJsonObject();
  }

  /** No sandbox of this gateway left: none open in the service, no container on the engine. */
  public void assertNoSandboxes() throws Exception {
    assertThat(gateway.gateway().sandboxes().active()).as("open sandbox sessions").isZero();
    Process p = new ProcessBuilder("docker", "ps", "-aq", "--filter",
        "label=" + ContainerLauncher.LABEL_GATEWAY + "=" + gatewayId).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(out).as("leftover containers").isEmpty();
  }

  @Override
  public void close() throws IOException {
    try {
      gateway.close();
    } finally {
      model.close();
      vertx.close().await();
    }
  }
}
