package dev.quarry.agent;

import static dev.quarry.agent.ScriptedModelServer.answer;
import static dev.quarry.agent.ScriptedModelServer.execute;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.api.TestGateway;
import dev.quarry.support.Await;
import dev.quarry.tenancy.Tenants;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The analysis quotas over HTTP: concurrent analyses and model tokens per day. Over either the
 * tenant gets 429 with Retry-After naming the quota; the place of an analysis comes back however
 * it ends (answer, failure, refusal, cancel by a client that went away).
 */
@DisplayName("Analysis quotas: concurrent analyses and model tokens per day")
class AnalysisQuotaTest {
  static AgentHarness h;

  @BeforeAll
  static void start() throws Exception {
    h = new AgentHarness(true);
  }

  @AfterAll
  static void stop() throws Exception {
    h.close();
  }

  @AfterEach
  void nothingLeft() throws Exception {
    h.model.reset();
    h.assertNoSandboxes();
  }

  private static void setQuotas(UUID tenant, JsonObject quotas) {
    HttpResponse<Buffer> set = h.gateway.admin().put("/v1/admin/tenants/" + tenant + "/quotas")
        .sendJsonObject(quotas.put("requests_per_minute", 10_000)).await();
    assertThat(set.statusCode()).as(set.bodyAsString()).isEqualTo(200);
  }

  private static JsonObject question(String q) {
    return new JsonObject().put("question", q).put("stream", false);
  }

  private static void assertOver(HttpResponse<Buffer> response, String quota) {
    assertThat(response.statusCode()).as(response.bodyAsString()).isEqualTo(429);
    assertThat(response.bodyAsString()).contains(quota);
    assertThat(Long.parseLong(response.getHeader("Retry-After"))).isPositive();
  }

  private static void assertAnswered(HttpResponse<Buffer> response) {
    assertThat(response.statusCode()).as(response.bodyAsString()).isEqualTo(200);
    assertThat(response.bodyAsJsonObject().getString("status")).isEqualTo("succeeded");
  }

  @Test
  @DisplayName("with a quota of 1, a second analysis while the first runs gets 429 naming concurrent_analyses;"
      + " the place comes back on answer, failure, refusal and cancel")
  void concurrentAnalyses() throws Exception {
    setQuotas(Tenants.DEFAULT, new JsonObject().put("concurrent_analyses", 1));
    ScriptedModelServer.Held held = new ScriptedModelServer.Held();
    h.model.then(held, answer("two", "print(2)"));
    Future<HttpResponse<Buffer>> first = h.gateway.client().post("/v1/analyses")
        .sendJsonObject(question("What is one plus one?"));
    // The model being asked is the real signal that the first analysis runs (and holds its place).
    held.asked().get(120, TimeUnit.SECONDS);

    HttpResponse<Buffer> second = h.post("/v1/analyses", question("And two plus two?"));
    assertOver(second, "concurrent_analyses");
    assertThat(h.model.requests()).as("the refused analysis never reached the model").hasSize(1);
    held.reply().complete(execute("print(2)"));
    assertAnswered(first.toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS));

    // The answer is out, so the place is free at once: no 429 for the next one.
    h.model.then(execute("print(3)"), answer("three", "print(3)"));
    assertAnswered(h.post("/v1/analyses", question("One plus two?")));

    // A failed analysis gives its place back.
    h.model.then(ScriptedModelServer.status(400));
    HttpResponse<Buffer> failed = h.post("/v1/analyses", question("Fail?"));
    assertThat(failed.statusCode()).as(failed.bodyAsString()).isEqualTo(200);
    assertThat(failed.bodyAsJsonObject().getString("status")).isEqualTo("failed");

    // So does one refused before it starts.
    HttpResponse<Buffer> refused = h.post("/v1/analyses", question("Unknown?")
        .put("document_ids", new JsonArray().add(UUID.randomUUID().toString())));
    assertThat(refused.statusCode()).as(refused.bodyAsString()).isEqualTo(404);

    // And one cancelled by a streaming client that went away.
    h.model.then(execute("n = 0\nwhile True:\n    n = n + 1"), answer("never", "print(1)"));
    UUID cancelled = h.postAndDisconnect(new JsonObject().put("question", "Count forever?").put("stream", true),
        event -> "code".equals(event.getString("type")));
    assertThat(h.awaitEnd(cancelled).getString("status")).isEqualTo("cancelled");

    h.model.then(execute("print(5)"), answer("five", "print(5)"));
    assertAnswered(h.post("/v1/analyses", question("Two plus three?")));
    // The run leaves the running set just after its answer goes out (AnalysisRun's finally).
    Await.until(() -> h.gateway.gateway().analyses().runningCount() == 0, java.time.Duration.ofSeconds(10),
        "no analysis left running");
  }

  @Test
  @DisplayName("model tokens are counted as the model reports them; past the day's quota an analysis gets 429"
      + " naming model_tokens_per_day, another tenant does not")
  void modelTokensPerDay() throws Exception {
    TestGateway.NewTenant t = h.gateway.createTenant("quota-tokens");
    // Each scripted model call reports 120 tokens: two calls take the tenant over 200.
    setQuotas(t.id(), new JsonObject().put("model_tokens_per_day", 200));
    WebClient client = h.gateway.clientFor(t.apiKey());
    h.model.then(execute("print(1)"), answer("one", "print(1)"));
    assertAnswered(client.post("/v1/analyses").sendJsonObject(question("One?")).await());
    assertThat(tokensToday(t.id())).isEqualTo(240);

    int asked = h.model.requests().size();
    HttpResponse<Buffer> over = client.post("/v1/analyses").sendJsonObject(question("Two?")).await();
    assertOver(over, "model_tokens_per_day");
    assertThat(h.model.requests()).as("the model is not asked past the quota").hasSize(asked);
    assertThat(client.get("/v1/analyses").send().await().bodyAsJsonObject().getJsonArray("analyses")).hasSize(1);

    h.model.then(execute("print(2)"), answer("two", "print(2)"));
    assertAnswered(h.post("/v1/analyses", question("Two, for the default tenant?")));
  }

  @Test
  @DisplayName("an execution's llm() spends the tenant's daily model tokens and is refused as LimitExceeded once they are spent")
  void executionLlmTokens() throws Exception {
    TestGateway.NewTenant t = h.gateway.createTenant("quota-llm");
    setQuotas(t.id(), new JsonObject().put("model_tokens_per_day", 100));
    WebClient client = h.gateway.clientFor(t.apiKey());
    // The scripted server answers every llm() completion itself ("LLM says: ..."), 120 tokens each.
    JsonObject first = client.post("/v1/executions")
        .sendJsonObject(new JsonObject().put("code", "await llm('What swims?')")).await().bodyAsJsonObject();
    assertThat(first.getBoolean("success")).as(first.encode()).isTrue();
    assertThat(first.getString("stdout")).contains("LLM says");
    assertThat(tokensToday(t.id())).isEqualTo(120);

    int asked = h.model.requests().size();
    JsonObject second = client.post("/v1/executions")
        .sendJsonObject(new JsonObject().put("code", "await llm('And what flies?')")).await().bodyAsJsonObject();
    assertThat(second.getBoolean("success")).as(second.encode()).isFalse();
    assertThat(second.getJsonObject("error").getString("type")).isEqualTo("LimitExceeded");
    assertThat(second.getJsonObject("error").getString("message")).contains("model_tokens_per_day");
    assertThat(h.model.requests()).as("the model is not asked past the quota").hasSize(asked);
  }

  @Test
  @DisplayName("an analysis' llm() and its replay's are refused as LimitExceeded once the tenant's daily tokens are spent,"
      + " without asking the model (issue 15: only executions were checked)")
  void analysisAndReplayLlmTokens() throws Exception {
    TestGateway.NewTenant t = h.gateway.createTenant("quota-analysis-llm");
    setQuotas(t.id(), new JsonObject().put("model_tokens_per_day", 100));
    WebClient client = h.gateway.clientFor(t.apiKey());
    // The analysis starts with the day's tokens untouched; while its first model turn is held, an
    // execution of the same tenant spends them (120 tokens), so its cell's llm() finds them spent.
    ScriptedModelServer.Held first = new ScriptedModelServer.Held();
    h.model.then(first);
    var started = client.post("/v1/analyses").sendJsonObject(question("What swims?"));
    first.asked().get(60, java.util.concurrent.TimeUnit.SECONDS);
    JsonObject spend = client.post("/v1/executions")
        .sendJsonObject(new JsonObject().put("code", "await llm('What swims?')")).await().bodyAsJsonObject();
    assertThat(spend.getBoolean("success")).as(spend.encode()).isTrue();
    int llmAsked = h.model.llmRequests().size();

    String program = "try:\n    print(await llm('And what flies?'))\nexcept LimitExceeded as e:\n    print('refused:', e)";
    first.reply().complete(execute(program));
    h.model.then(new ScriptedModelServer.Dynamic(request -> answer(
        ScriptedModelServer.toolResults(request).get(0).getString("stdout").trim(), program)));
    HttpResponse<Buffer> done = started.await();
    assertAnswered(done);
    assertThat(done.bodyAsJsonObject().getString("answer")).as(done.bodyAsString())
        .contains("refused:").contains("model_tokens_per_day");
    String id = done.bodyAsJsonObject().getString("id");
    assertThat(h.model.llmRequests()).as("the model is not asked past the quota").hasSize(llmAsked);

    JsonObject replay = client.post("/v1/analyses/" + id + "/replay").sendJsonObject(new JsonObject()).await()
        .bodyAsJsonObject();
    assertThat(replay.getJsonObject("replay").getString("stdout")).as(replay.encode())
        .contains("refused:").contains("model_tokens_per_day");
    assertThat(h.model.llmRequests()).as("nor by the replay").hasSize(llmAsked);
  }

  private static long tokensToday(UUID tenant) throws Exception {
    try (var c = h.gateway.database().jdbc(); var s = c.prepareStatement(
        "SELECT coalesce(sum(tokens), 0) FROM token_usage WHERE tenant_id = ?")) {
      s.setObject(1, tenant);
      try (var rs = s.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}
