package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.agent.AgentSettings;
import dev.quarry.agent.ScriptedModelServer;
import dev.quarry.gateway.Gateway;
import dev.quarry.sandbox.RunnerImage;
import dev.quarry.sandbox.SandboxLimits;
import dev.quarry.sandbox.SandboxSettings;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Every event stream writes a comment line while it has nothing to say ({@code
 * QUARRY_SSE_HEARTBEAT_SECONDS}, one second here), so that a proxy's idle timeout does not cut a
 * quiet model call or cell; the events around it are unchanged.
 */
@DisplayName("Event streams send heartbeats while they are quiet")
class EventStreamHeartbeatTest {
  static final Vertx vertx = Vertx.vertx();
  static ScriptedModelServer model;
  static TestGateway gateway;

  @BeforeAll
  static void setUp() throws Exception {
    String image = RunnerImage.ensure();
    model = ScriptedModelServer.start(vertx);
    AgentSettings agent = AgentSettings.fromEnv(Map.of()).withEndpoint(model.baseUrl(), "test-key", "scripted");
    gateway = TestGateway.startWithAgent(config -> config.withSseHeartbeatSeconds(1), dataDir -> {
      try {
        Path runRoot = Files.createDirectories(dataDir.resolve("run"));
        return new Gateway.AgentWiring(agent, new SandboxSettings(SandboxSettings.DEFAULT_DOCKER_HOST, image,
            List.of(), "", "hb-" + UUID.randomUUID().toString().substring(0, 8), runRoot, SandboxLimits.DEFAULTS,
            SandboxLimits.MAXIMUMS, 0, Duration.ofMinutes(10), false));
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    });
  }

  @AfterAll
  static void tearDown() throws Exception {
    gateway.close();
    model.close();
    vertx.close().await();
  }

  @Test
  @DisplayName("an execution whose cell is busy for three seconds streams heartbeats before its result")
  void executionHeartbeats() throws Exception {
    Stream stream = open("/v1/executions", new JsonObject()
        .put("code", "while True:\n    pass").put("limits", new JsonObject().put("wall_time_ms", 3000)));
    String body = stream.body.get(60, TimeUnit.SECONDS);
    assertThat(body).contains(": keep-alive\n\n");
    assertThat(body.indexOf(": keep-alive")).isLessThan(body.indexOf("event: result"));
    assertThat(body.strip()).endsWith("}");
    assertThat(body).contains("\"Timeout\"");
  }

  @Test
  @DisplayName("an analysis waiting on a quiet model call streams heartbeats, then its events and answer")
  void analysisHeartbeats() throws Exception {
    ScriptedModelServer.Held held = new ScriptedModelServer.Held();
    model.then(held);
    Stream stream = open("/v1/analyses", new JsonObject().put("question", "Is anyone there?"));
    held.asked().get(60, TimeUnit.SECONDS);
    // The model is silent: the stream must still speak, more than once.
    stream.heartbeats(2).get(30, TimeUnit.SECONDS);
    held.reply().complete(ScriptedModelServer.message("Nobody answered."));
    String body = stream.body.get(60, TimeUnit.SECONDS);
    assertThat(body).contains("event: started", "event: model_turn");
    // A reply with no execution ends in correction turns and then a typed failure: the stream still ends.
    assertThat(body).containsAnyOf("event: answer", "event: failed");
    assertThat(body.indexOf(": keep-alive")).isGreaterThan(body.indexOf("event: started"));
  }

  /** A streamed POST whose chunks are watched as they come. */
  record Stream(StringBuilder seen, CompletableFuture<String> body, Vertx vertx) {
    CompletableFuture<Void> heartbeats(int count) {
      CompletableFuture<Void> done = new CompletableFuture<>();
      vertx.setPeriodic(50, t -> {
        synchronized (seen) {
          if (seen.toString().split(": keep-alive", -1).length - 1 >= count) {
            vertx.cancelTimer(t);
            done.complete(null);
          }
        }
        if (body.isDone()) {
          vertx.cancelTimer(t);
          done.completeExceptionally(new AssertionError("the stream ended first: " + seen));
        }
      });
      return done;
    }
  }

  private static Stream open(String path, JsonObject body) throws Exception {
    HttpClient http = gateway.vertx().createHttpClient();
    HttpClientRequest request = http.request(new RequestOptions().setMethod(HttpMethod.POST)
        .setHost("localhost").setPort(gateway.port()).setURI(path)
        .putHeader("Accept", "text/event-stream").putHeader("Content-Type", "application/json")
        .putHeader("Authorization", "Bearer " + gateway.apiKey())).await();
    StringBuilder seen = new StringBuilder();
    CompletableFuture<String> whole = new CompletableFuture<>();
    request.response().onSuccess((HttpClientResponse response) -> {
      assertThat(response.statusCode()).isEqualTo(200);
      response.handler(chunk -> {
        synchronized (seen) {
          seen.append(chunk.toString());
        }
      });
      response.endHandler(v -> {
        synchronized (seen) {
          whole.complete(seen.toString());
        }
        http.close();
      });
    }).onFailure(whole::completeExceptionally);
    request.send(body.encode());
    return new Stream(seen, whole, gateway.vertx());
  }
}
