package dev.quarry.api;

import dev.quarry.support.Await;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.dockerjava.api.DockerClient;
import dev.quarry.sandbox.ContainerLauncher;
import dev.quarry.sandbox.HostileRunner;
import dev.quarry.sandbox.SandboxLimits;
import dev.quarry.sandbox.SandboxSettings;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
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
 * A noisy tenant does its worst through the public API, with a runner that does whatever its code
 * asks ({@link HostileRunner}): it holds every sandbox it may and floods callbacks. A quiet tenant's
 * search, execution and {@code /readyz} keep working, and the noisy one gets typed refusals.
 */
@DisplayName("A noisy tenant cannot take the gateway from a quiet one")
class FairSharingApiTest {
  static final int MAX_ACTIVE = 4;
  static TestGateway gateway;
  static DockerClient docker;
  static final String gatewayId = "fair-test-" + UUID.randomUUID().toString().substring(0, 8);
  static TestGateway.NewTenant noisy;
  static TestGateway.NewTenant quiet;

  @BeforeAll
  static void setUp() throws Exception {
    String image = HostileRunner.ensure();
    docker = ContainerLauncher.connect(SandboxSettings.DEFAULT_DOCKER_HOST);
    gateway = TestGateway.startWithAgent(dataDir -> {
      try {
        Path runRoot = Files.createDirectories(dataDir.resolve("run"));
        return new dev.quarry.gateway.Gateway.AgentWiring(null, new SandboxSettings(SandboxSettings.DEFAULT_DOCKER_HOST,
            image, List.of(), "", gatewayId, runRoot, SandboxLimits.DEFAULTS, SandboxLimits.MAXIMUMS, 0,
            Duration.ofMinutes(10), false, MAX_ACTIVE, Duration.ofSeconds(20), SandboxSettings.Fairness.DEFAULTS));
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    });
    noisy = gateway.createTenant("noisy");
    quiet = gateway.createTenant("quiet");
    for (TestGateway.NewTenant t : List.of(noisy, quiet)) {
      HttpResponse<Buffer> r = gateway.clientFor(t.apiKey()).post("/v1/documents").sendJsonObject(new JsonObject()
          .put("uri", "ferry.md").put("content_type", "text/markdown")
          .put("content", "# Ferry\n\n## Timetable\n\nThe first ferry leaves at 06:10.\n")).await();
      assertThat(r.statusCode()).as(r.bodyAsString()).isEqualTo(201);
    }
  }

  @AfterAll
  static void tearDown() throws Exception {
    try {
      if (gateway != null) {
        gateway.close();
      }
      assertThat(containers()).isEmpty();
    } finally {
      docker.close();
    }
  }

  @Test
  @DisplayName("holding its share of the sandboxes: the noisy tenant's next one is 429 naming the quota, the quiet tenant's runs, search and /readyz answer")
  void sandboxShare() throws Exception {
    HttpClient http = gateway.vertx().createHttpClient();
    List<HttpClientRequest> held = new ArrayList<>();
    try {
      // Half of the gateway's 4 sandboxes is the noisy tenant's share (QUARRY_SANDBOX_TENANT_SHARE_PERCENT=50).
      for (int i = 0; i < MAX_ACTIVE / 2; i++) {
        held.add(hold(http, noisy.apiKey()));
      }
      assertThat(gateway.gateway().sandboxes().heldBy(noisy.id())).isEqualTo(2);
      WebClient noisyClient = gateway.clientFor(noisy.apiKey());
      HttpResponse<Buffer> refused = noisyClient.post("/v1/executions")
          .sendJsonObject(new JsonObject().put("code", "#search ferry")).await();
      assertThat(refused.statusCode()).as(refused.bodyAsString()).isEqualTo(429);
      assertThat(refused.getHeader("Retry-After")).isEqualTo("5");
      JsonObject error = refused.bodyAsJsonObject().getJsonObject("error");
      assertThat(error.getString("code")).isEqualTo("quota_exceeded");
      assertThat(error.getString("message")).contains("quota concurrent_sandboxes exceeded (limit 2)");

      WebClient quietClient = gateway.clientFor(quiet.apiKey());
      JsonObject ran = quietExecution(quietClient);
      assertThat(ran.getString("stdout")).matches("hits=[1-9]\\d*\n");
      HttpResponse<Buffer> search = quietClient.post("/v1/search")
          .sendJsonObject(new JsonObject().put("query", "first ferry")).await();
      assertThat(search.statusCode()).isEqualTo(200);
      assertThat(search.bodyAsJsonObject().getJsonArray("results")).isNotEmpty();
      assertThat(gateway.bareClient().get("/readyz").send().await().statusCode()).isEqualTo(200);

      // An admin lowers the noisy tenant's own quota below its share: the message names the new limit.
      HttpResponse<Buffer> set = gateway.admin().put("/v1/admin/tenants/" + noisy.id() + "/quotas")
          .sendJsonObject(new JsonObject().put("concurrent_sandboxes", 1)).await();
      assertThat(set.statusCode()).as(set.bodyAsString()).isEqualTo(200);
      assertThat(set.bodyAsJsonObject().getJsonObject("quotas").getLong("concurrent_sandboxes")).isEqualTo(1);
      HttpResponse<Buffer> lowered = noisyClient.post("/v1/executions")
          .sendJsonObject(new JsonObject().put("code", "#search ferry")).await();
      assertThat(lowered.statusCode()).isEqualTo(429);
      assertThat(lowered.bodyAsJsonObject().getJsonObject("error").getString("message"))
          .contains("(limit 1)").contains("its concurrent_sandboxes quota is 1");
      HttpResponse<Buffer> tooMuch = gateway.admin().put("/v1/admin/tenants/" + noisy.id() + "/quotas")
          .sendJsonObject(new JsonObject().put("concurrent_sandboxes", 1025)).await();
      assertThat(tooMuch.statusCode()).isEqualTo(400);
      assertThat(tooMuch.bodyAsString()).contains("concurrent_sandboxes").contains("QUARRY_QUOTA_CONCURRENT_SANDBOXES_MAX");
    } finally {
      for (HttpClientRequest r : held) {
        r.connection().close().await();
      }
      http.close().await();
      gateway.admin().put("/v1/admin/tenants/" + noisy.id() + "/quotas").sendJsonObject(new JsonObject()).await();
    }
    Await.until(() -> gateway.gateway().sandboxes().heldBy(noisy.id()) == 0 && containers().isEmpty(),
        Duration.ofSeconds(30), "the held sandboxes to be removed");
  }

  @Test
  @DisplayName("a callback flood is cut at the execution's budget with LimitExceeded, while the quiet tenant's execution, search and /readyz answer")
  void callbackFlood() throws Exception {
    WebClient noisyClient = gateway.clientFor(noisy.apiKey());
    // The execution's budget is under test here, not the tenant's callbacks per minute (CallbackRateTest).
    assertThat(gateway.admin().put("/v1/admin/tenants/" + noisy.id() + "/quotas")
        .sendJsonObject(new JsonObject().put("callbacks_per_minute", 100_000)).await().statusCode()).isEqualTo(200);
    // Two floods at once (its share of the sandboxes): 4000 search(limit=100) calls sent at once.
    List<Future<HttpResponse<Buffer>>> floods = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      floods.add(noisyClient.post("/v1/executions").sendJsonObject(new JsonObject()
          .put("code", "#flood 2000 search 100").put("limits", new JsonObject().put("callbacks", 300))));
    }
    WebClient quietClient = gateway.clientFor(quiet.apiKey());
    for (int i = 0; i < 3; i++) {
      assertThat(quietExecution(quietClient).getString("stdout")).matches("hits=[1-9]\\d*\n");
      HttpResponse<Buffer> search = quietClient.post("/v1/search")
          .sendJsonObject(new JsonObject().put("query", "first ferry")).await();
      assertThat(search.statusCode()).isEqualTo(200);
      assertThat(gateway.bareClient().get("/readyz").send().await().statusCode()).isEqualTo(200);
    }
    for (Future<HttpResponse<Buffer>> f : floods) {
      HttpResponse<Buffer> r = f.await();
      assertThat(r.statusCode()).as(r.bodyAsString()).isEqualTo(200);
      assertThat(r.bodyAsJsonObject().getString("stdout")).isEqualTo("LimitExceeded=1700 ok=300\n");
    }
    Await.until(() -> containers().isEmpty(), Duration.ofSeconds(30), "the floods' sandboxes to be removed");
  }

  private static JsonObject quietExecution(WebClient client) {
    HttpResponse<Buffer> r = client.post("/v1/executions")
        .sendJsonObject(new JsonObject().put("code", "#search first ferry")).await();
    assertThat(r.statusCode()).as(r.bodyAsString()).isEqualTo(200);
    JsonObject result = r.bodyAsJsonObject();
    assertThat(result.getBoolean("success")).as(result.encode()).isTrue();
    return result;
  }

  /** A streamed execution that holds its sandbox until its connection is closed. */
  private static HttpClientRequest hold(HttpClient http, String key) throws Exception {
    HttpClientRequest request = http.request(new RequestOptions().setMethod(HttpMethod.POST)
        .setHost("localhost").setPort(gateway.port()).setURI("/v1/executions")
        .putHeader("Accept", "text/event-stream").putHeader("Content-Type", "application/json")
        .putHeader("Authorization", "Bearer " + key)).await();
    CompletableFuture<Void> holding = new CompletableFuture<>();
    request.response().onSuccess(response -> response.handler(chunk -> {
      if (chunk.toString().contains("holding")) {
        holding.complete(null);
      }
    }));
    request.send(new JsonObject().put("code", "#hold")
        .put("limits", new JsonObject().put("wall_time_ms", 110_000)).encode());
    holding.get(60, TimeUnit.SECONDS);
    return request;
  }

  static List<?> containers() {
    return docker.listContainersCmd().withShowAll(true)
        .withLabelFilter(Map.of(ContainerLauncher.LABEL_GATEWAY, gatewayId)).exec();
  }
}
