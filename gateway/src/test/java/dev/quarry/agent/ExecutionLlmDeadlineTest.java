package dev.quarry.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.support.Await;
import dev.quarry.tenancy.Tenants;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * An execution's llm() ends with its execution (red team round 6, R6-8): the model call is bounded
 * by the cell's wall time, and a call still running when the cell ends holds none of the tenant's
 * callback places.
 */
@DisplayName("Execution llm() calls end with their cell and give the tenant's places back")
class ExecutionLlmDeadlineTest {
  static AgentHarness h;

  @BeforeAll
  static void start() throws Exception {
    h = new AgentHarness(true);
  }

  @AfterAll
  static void stop() throws Exception {
    h.close();
  }

  @Test
  @DisplayName("8 executions whose llm() the model holds past their 1.5 s cells: the model calls are cut at the"
      + " cells' end, no place stays held, and the same tenant's next search() is answered at once")
  void llmEndsWithItsExecution() throws Exception {
    CompletableFuture<Void> gate = new CompletableFuture<>();
    h.model.holdLlm(gate);
    try {
      List<Future<HttpResponse<Buffer>>> runs = new ArrayList<>();
      for (int i = 0; i < 8; i++) { // QUARRY_TENANT_CALLBACKS_IN_FLIGHT's default: every place of the tenant
        runs.add(h.gateway.client().post("/v1/executions").sendJsonObject(new JsonObject()
            .put("code", "await llm('hold " + i + "')").put("limits", new JsonObject().put("wall_time_ms", 1_500))));
      }
      for (Future<HttpResponse<Buffer>> run : runs) {
        HttpResponse<Buffer> r = run.toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
        assertThat(r.statusCode()).as(r.bodyAsString()).isEqualTo(200);
        assertThat(r.bodyAsJsonObject().getBoolean("success")).as(r.bodyAsString()).isFalse();
      }
      assertThat(h.model.llmRequests()).as("every llm() reached the model").hasSize(8);
      Await.until(() -> h.model.llmHangUps() == 8, Duration.ofSeconds(10),
          "the model calls to end with their executions (hang-ups " + h.model.llmHangUps() + ")");
      assertThat(h.gateway.gateway().sandboxes().callbacksInFlight(Tenants.DEFAULT))
          .as("callback places held after the executions ended").isZero();

      long started = System.nanoTime();
      HttpResponse<Buffer> search = h.gateway.client().post("/v1/executions").sendJsonObject(new JsonObject()
          .put("code", "print(len(await search('ferry')) >= 0)")
          .put("limits", new JsonObject().put("wall_time_ms", 20_000))).await();
      Duration took = Duration.ofNanos(System.nanoTime() - started);
      assertThat(search.bodyAsJsonObject().getBoolean("success")).as(search.bodyAsString()).isTrue();
      assertThat(search.bodyAsJsonObject().getString("stdout")).isEqualTo("True\n");
      assertThat(took).as("the same tenant's search, after the held llm() calls").isLessThan(Duration.ofSeconds(8));
      assertThat(h.gateway.gateway().sandboxes().callbacksInFlight(Tenants.DEFAULT)).isZero();
    } finally {
      gate.complete(null);
      h.model.reset();
    }
    h.assertNoSandboxes();
  }
  @Test
  @DisplayName("an analysis' llm() held past its cell (30 s, the default) ends with the cell, not with the analysis'"
      + " longer wall time")
  void analysisLlmEndsWithItsCell() throws Exception {
    CompletableFuture<Void> gate = new CompletableFuture<>();
    h.model.holdLlm(gate);
    h.model.then(ScriptedModelServer.execute("await llm('hold')"), ScriptedModelServer.answer("done", "print(1)"));
    try {
      HttpResponse<Buffer> r = h.gateway.client().post("/v1/analyses").sendJsonObject(new JsonObject()
          .put("question", "Slow llm?").put("stream", false)
          .put("budgets", new JsonObject().put("wall_time_ms", 120_000))).await();
      assertThat(r.statusCode()).as(r.bodyAsString()).isEqualTo(200);
      assertThat(h.model.llmRequests()).hasSize(1);
      Await.until(() -> h.model.llmHangUps() == 1, Duration.ofSeconds(5),
          "the llm() call to end with its cell (hang-ups " + h.model.llmHangUps() + ")");
      assertThat(h.gateway.gateway().sandboxes().callbacksInFlight(Tenants.DEFAULT)).isZero();
    } finally {
      gate.complete(null);
      h.model.reset();
    }
    h.assertNoSandboxes();
  }
}
