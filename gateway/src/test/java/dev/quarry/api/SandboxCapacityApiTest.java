package dev.quarry.api;

import dev.quarry.support.Await;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.dockerjava.api.DockerClient;
import dev.quarry.agent.AgentSettings;
import dev.quarry.agent.ScriptedModelServer;
import dev.quarry.gateway.Gateway;
import dev.quarry.sandbox.ContainerLauncher;
import dev.quarry.sandbox.RunnerImage;
import dev.quarry.sandbox.SandboxCapacity;
import dev.quarry.sandbox.SandboxLimits;
import dev.quarry.sandbox.SandboxSettings;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
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

@DisplayName("A gateway whose sandboxes are all taken answers with a typed refusal, never a 500")
class SandboxCapacityApiTest {
  static final Vertx vertx = Vertx.vertx();
  static ScriptedModelServer model;
  static TestGateway gateway;
  static DockerClient docker;
  static String gatewayId = "cap-test-" + UUID.randomUUID().toString().substring(0, 8);

  @BeforeAll
  static void setUp() throws Exception {
    String image = RunnerImage.ensure();
    model = ScriptedModelServer.start(vertx);
    AgentSettings agent = AgentSettings.fromEnv(Map.of()).withEndpoint(model.baseUrl(), "test-key", "scripted-model");
    docker = ContainerLauncher.connect(SandboxSettings.DEFAULT_DOCKER_HOST);
    gateway = TestGateway.startWithAgent(dataDir -> {
      try {
        Path runRoot = Files.createDirectories(dataDir.resolve("run"));
        // One sandbox per gateway, and a short wait, so that one held sandbox makes the next request wait out.
        return new Gateway.AgentWiring(agent, new SandboxSettings(SandboxSettings.DEFAULT_DOCKER_HOST, image,
            List.of(), "", gatewayId, runRoot, SandboxLimits.DEFAULTS, SandboxLimits.MAXIMUMS, 0,
            Duration.ofMinutes(10), false, 1, Duration.ofMillis(1500),
            // One tenant may take the whole gateway here: the capacity is under test, not the fair share.
            SandboxSettings.Fairness.DEFAULTS.withTenantSharePercent(100)));
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    });
  }

  @AfterAll
  static void tearDown() throws Exception {
    try {
      gateway.close();
      model.close();
      vertx.close().await();
      assertThat(containers()).isEmpty();
    } finally {
      docker.close();
    }
  }

  @Test
  @DisplayName("503 sandbox_capacity_exhausted with Retry-After for executions and analyses, until the held sandbox's client goes")
  void refusedWhileFull() throws Exception {
    SandboxCapacity capacity = gateway.gateway().sandboxes().capacity();
    HttpClient http = gateway.vertx().createHttpClient();
    try {
      // A streamed execution that runs until its client goes away holds the only slot.
      HttpClientRequest held = http.request(new RequestOptions().setMethod(HttpMethod.POST)
          .setHost("localhost").setPort(gateway.port()).setURI("/v1/executions")
          .putHeader("Accept", "text/event-stream").putHeader("Content-Type", "application/json")
          .putHeader("Authorization", "Bearer " + gateway.apiKey())).await();
      CompletableFuture<Void> started = new CompletableFuture<>();
      held.response().onSuccess(response -> response.handler(chunk -> {
        if (chunk.toString().contains("started")) {
          started.complete(null);
        }
      }));
      held.send(new JsonObject()
          .put("code", "print('started')\nawait list_documents()\nwhile True:\n    pass")
          .put("limits", new JsonObject().put("wall_time_ms", 120_000)).encode());
      started.get(60, TimeUnit.SECONDS);
      assertThat(capacity.used()).isEqualTo(1);

      HttpResponse<Buffer> refused = gateway.client().post("/v1/executions")
          .sendJsonObject(new JsonObject().put("code", "1 + 1")).await();
      assertThat(refused.statusCode()).as(refused.bodyAsString()).isEqualTo(503);
      assertThat(refused.getHeader("Retry-After")).isEqualTo("2");
      JsonObject error = refused.bodyAsJsonObject().getJsonObject("error");
      assertThat(error.getString("code")).isEqualTo("sandbox_capacity_exhausted");
      assertThat(error.getString("message")).contains("QUARRY_SANDBOX_MAX_ACTIVE").contains("1500 ms");

      HttpResponse<Buffer> analysis = gateway.client().post("/v1/analyses")
          .sendJsonObject(new JsonObject().put("question", "Is there room?")).await();
      assertThat(analysis.statusCode()).as(analysis.bodyAsString()).isEqualTo(200);
      String id = analysis.bodyAsJsonObject().getString("id");
      JsonObject stored = gateway.client().get("/v1/analyses/" + id).send().await().bodyAsJsonObject();
      assertThat(stored.getString("status")).isEqualTo("failed");
      assertThat(stored.getJsonObject("error").getString("type")).isEqualTo("SandboxCapacityExhausted");
      assertThat(stored.getJsonObject("error").getString("message")).contains("QUARRY_SANDBOX_MAX_ACTIVE");

      String metrics = gateway.metricsClient().get("/metrics").send().await().bodyAsString();
      assertThat(metrics).contains("quarry_sandbox_start_failures_total{reason=\"exhausted\"} 2.0")
          .contains("quarry_sandbox_limit_sandboxes 1.0").contains("quarry_sandbox_live_sandboxes 1.0");

      // The client going away removes its sandbox and frees the slot.
      held.connection().close().await();
      Await.until(() -> capacity.used() == 0 && containers().isEmpty(), Duration.ofSeconds(30), "the held sandbox to be removed");
      HttpResponse<Buffer> ran = gateway.client().post("/v1/executions")
          .sendJsonObject(new JsonObject().put("code", "1 + 1")).await();
      assertThat(ran.statusCode()).as(ran.bodyAsString()).isEqualTo(200);
      assertThat(ran.bodyAsJsonObject().getString("stdout")).isEqualTo("2");
      Await.until(() -> capacity.used() == 0, Duration.ofSeconds(30), "the execution's sandbox to be removed");
      assertThat(containers()).isEmpty();
    } finally {
      http.close().await();
    }
  }

  static List<?> containers() {
    return docker.listContainersCmd().withShowAll(true)
        .withLabelFilter(Map.of(ContainerLauncher.LABEL_GATEWAY, gatewayId)).exec();
  }
}
