package dev.quarry.callbacks;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.api.TestGateway;
import dev.quarry.sandbox.HostileRunner;
import dev.quarry.sandbox.SandboxLimits;
import dev.quarry.sandbox.SandboxSettings;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A tenant's sandbox callbacks are held to its {@code callbacks_per_minute} (issue 33, class 4),
 * through the public API, with the runner of escaped code ({@link HostileRunner}, {@code #flood}:
 * all its calls at once). What is asserted is the bucket's arithmetic, which no machine's speed can
 * beat: N calls past a burst of B at R a second take at least (N - B) / R seconds, and no more
 * turns than B + R × the wall time are ever given.
 */
@DisplayName("Sandbox callbacks are held to the tenant's callbacks per minute")
class CallbackRateTest {
  static TestGateway gateway;

  @BeforeAll
  static void setUp() throws Exception {
    String image = HostileRunner.ensure();
    gateway = TestGateway.startWithAgent(dataDir -> {
      try {
        Path runRoot = Files.createDirectories(dataDir.resolve("run"));
        return new dev.quarry.gateway.Gateway.AgentWiring(null, new SandboxSettings(SandboxSettings.DEFAULT_DOCKER_HOST,
            image, List.of(), "", "rate-" + UUID.randomUUID().toString().substring(0, 8), runRoot,
            SandboxLimits.DEFAULTS, SandboxLimits.MAXIMUMS, 0, Duration.ofMinutes(10), false, 6,
            Duration.ofSeconds(30), SandboxSettings.Fairness.DEFAULTS));
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    });
  }

  @AfterAll
  static void tearDown() throws Exception {
    if (gateway != null) {
      gateway.close();
    }
  }

  private static TestGateway.NewTenant tenant(String name, long callbacksPerMinute) {
    TestGateway.NewTenant t = gateway.createTenant(name);
    HttpResponse<Buffer> set = gateway.admin().put("/v1/admin/tenants/" + t.id() + "/quotas")
        .sendJsonObject(new JsonObject().put("callbacks_per_minute", callbacksPerMinute)).await();
    assertThat(set.statusCode()).as(set.bodyAsString()).isEqualTo(200);
    assertThat(set.bodyAsJsonObject().getJsonObject("quotas").getLong("callbacks_per_minute"))
        .isEqualTo(callbacksPerMinute);
    HttpResponse<Buffer> doc = gateway.clientFor(t.apiKey()).post("/v1/documents").sendJsonObject(new JsonObject()
        .put("uri", "ferry.md").put("content_type", "text/markdown")
        .put("content", "# Ferry\n\n## Timetable\n\nThe first ferry leaves at 06:10.\n")).await();
    assertThat(doc.statusCode()).as(doc.bodyAsString()).isEqualTo(201);
    return t;
  }

  private static Future<HttpResponse<Buffer>> flood(WebClient client, int calls, long wallMs) {
    return client.post("/v1/executions").sendJsonObject(new JsonObject().put("code", "#flood " + calls + " search 5")
        .put("limits", new JsonObject().put("callbacks", calls).put("wall_time_ms", wallMs)));
  }

  @Test
  @DisplayName("past its burst a flood waits its turn: 300 calls at 600 a minute (a burst of 100) are all served, and take at least 20 s; the quiet tenant is served meanwhile")
  void floodWaitsItsTurn() throws Exception {
    TestGateway.NewTenant noisy = tenant("noisy-wait", 600);
    TestGateway.NewTenant quiet = tenant("quiet-wait", 600);
    Future<HttpResponse<Buffer>> flooding = flood(gateway.clientFor(noisy.apiKey()), 300, 60_000);
    HttpResponse<Buffer> quietRun = gateway.clientFor(quiet.apiKey()).post("/v1/executions")
        .sendJsonObject(new JsonObject().put("code", "#search first ferry")).await();
    assertThat(quietRun.statusCode()).as(quietRun.bodyAsString()).isEqualTo(200);
    assertThat(quietRun.bodyAsJsonObject().getString("stdout")).matches("hits=[1-9]\\d*\n");
    assertThat(flooding.isComplete()).as("the flood, still waiting its turns when the quiet call was served").isFalse();

    HttpResponse<Buffer> r = flooding.await();
    assertThat(r.statusCode()).as(r.bodyAsString()).isEqualTo(200);
    JsonObject result = r.bodyAsJsonObject();
    assertThat(result.getString("stdout")).as(result.encode()).isEqualTo("ok=300\n");
    // 200 calls past the burst of 100, at 10 a second.
    assertThat(result.getLong("duration_ms")).as("the flood's time").isGreaterThanOrEqualTo(19_900L);
  }

  @Test
  @DisplayName("a call whose turn would come after its cell's wall time is refused at once as LimitExceeded naming the quota, and no more than the burst and the wall time's worth are served")
  void pastTheWallTimeIsRefused() throws Exception {
    TestGateway.NewTenant noisy = tenant("noisy-refused", 600);
    // A wall time of 10 s, not 3: the burst's 100 searches take their turns in the tenant's search
    // line (QUARRY_SEARCH_TENANT_IN_FLIGHT, one at a time on 2 CPUs), which on a loaded machine took
    // more than 3 s, and the cell then timed out before the refusals could be counted.
    HttpResponse<Buffer> r = flood(gateway.clientFor(noisy.apiKey()), 300, 10_000).await();
    assertThat(r.statusCode()).as(r.bodyAsString()).isEqualTo(200);
    String stdout = r.bodyAsJsonObject().getString("stdout");
    assertThat(stdout).as(r.bodyAsString()).matches("LimitExceeded=\\d+ ok=\\d+\n");
    int ok = Integer.parseInt(stdout.replaceAll("(?s).*ok=(\\d+).*", "$1"));
    int refused = Integer.parseInt(stdout.replaceAll("(?s).*LimitExceeded=(\\d+).*", "$1"));
    assertThat(ok + refused).isEqualTo(300);
    // The burst of 100, plus 10 a second for the cell's 10 s (and the one turn due at its very end).
    assertThat(ok).as("calls served").isBetween(1, 201);
    assertThat(refused).as("calls refused").isGreaterThanOrEqualTo(99);

    double refusals = gateway.gateway().metrics().registry().find("quarry_callback_duration").tag("kind", "search")
        .tag("outcome", "refused").timer().count();
    assertThat(refusals).as("refusals counted as such").isGreaterThanOrEqualTo(refused);

    // What the code hears: at one call a minute (a burst of one), the second call's turn is a minute away.
    TestGateway.NewTenant slow = tenant("slow", 1);
    WebClient client = gateway.clientFor(slow.apiKey());
    assertThat(flood(client, 2, 5_000).await().bodyAsJsonObject().getString("stdout")).isEqualTo("LimitExceeded=1 ok=1\n");
    HttpResponse<Buffer> heard = client.post("/v1/executions")
        .sendJsonObject(new JsonObject().put("code", "#search first ferry")).await();
    assertThat(heard.bodyAsJsonObject().getString("stdout")).as(heard.bodyAsString())
        .startsWith("error=LimitExceeded: quota callbacks_per_minute exceeded (limit 1): the calls of the tenant's"
            + " sandboxes (search, list_documents, llm) are over 1 a minute, and this call's turn would come after its"
            + " cell's wall time");
  }
}
