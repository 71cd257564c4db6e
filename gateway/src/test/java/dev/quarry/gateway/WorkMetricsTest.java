package dev.quarry.gateway;

import static dev.quarry.agent.ScriptedModelServer.answer;
import static dev.quarry.agent.ScriptedModelServer.execute;
import static dev.quarry.agent.ScriptedModelServer.status;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.agent.AgentHarness;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The meters of real work: executions (a real sandbox, a search callback, a raising cell, a cell
 * that ignores its wall time), then two analyses against the scripted model, one that answers after
 * a retried 500 and calls llm(), one that fails on a storm of 500s. Each phase is judged by how far the meters moved across it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("GET /metrics, after executions and two analyses")
class WorkMetricsTest {
  private AgentHarness h;
  private Scrape before;
  private Scrape afterExecution;
  private Scrape afterFailedCells;
  private Scrape afterAnalyses;
  private JsonObject ready;

  @BeforeAll
  void exercise() throws Exception {
    h = new AgentHarness(false);
    HttpResponse<Buffer> ingested = h.gateway.client().post("/v1/documents").sendJsonObject(new JsonObject()
        .put("title", "Tides").put("uri", "tides.md").put("content", MetricsEndpointTest.DOCUMENT)
        .put("content_type", "text/markdown")).await();
    assertThat(ingested.statusCode()).as(ingested.bodyAsString()).isEqualTo(201);
    before = scrape();

    HttpResponse<Buffer> executed = h.gateway.client().post("/v1/executions").sendJsonObject(new JsonObject()
        .put("code", "hits = await search('quay flood', limit=3)\nlen(hits)")).await();
    assertThat(executed.statusCode()).as(executed.bodyAsString()).isEqualTo(200);
    assertThat(executed.bodyAsJsonObject().getBoolean("success")).as(executed.bodyAsString()).isTrue();
    afterExecution = scrape();

    // A cell that raises, and one the runner cannot stop (a single C call) which gets its sandbox killed.
    assertThat(executed("raise ValueError('no')", 5_000).getJsonObject("error").getString("type"))
        .isEqualTo("ValueError");
    assertThat(executed("sum(range(10 ** 13))", 300).getJsonObject("error").getString("type"))
        .isEqualTo("Timeout");
    afterFailedCells = scrape();

    h.model.llm(prompt -> "a short reply");
    h.model.then(status(500), execute("r = await llm('say something')\nprint(r)"), answer("done", "print(1)"));
    assertThat(analysis("Does it answer?")).isEqualTo("succeeded");
    h.model.then(status(500), status(500), status(500));
    assertThat(analysis("Is the model up?")).isEqualTo("failed");
    assertThat(h.model.remaining()).isZero();
    afterAnalyses = scrape();
    ready = h.gateway.client().get("/readyz").send().await().bodyAsJsonObject();
  }

  private JsonObject executed(String code, int wallTimeMs) {
    HttpResponse<Buffer> r = h.gateway.client().post("/v1/executions").sendJsonObject(new JsonObject()
        .put("code", code).put("limits", new JsonObject().put("wall_time_ms", wallTimeMs))).await();
    assertThat(r.statusCode()).as(r.bodyAsString()).isEqualTo(200);
    return r.bodyAsJsonObject();
  }

  private String analysis(String question) {
    HttpResponse<Buffer> r = h.gateway.client().post("/v1/analyses")
        .sendJsonObject(new JsonObject().put("question", question)).await();
    assertThat(r.statusCode()).as(r.bodyAsString()).isEqualTo(200);
    return r.bodyAsJsonObject().getString("status");
  }

  private Scrape scrape() {
    HttpResponse<Buffer> metrics = h.gateway.metricsClient().get("/metrics").send().await();
    assertThat(metrics.statusCode()).isEqualTo(200);
    return Scrape.parse(metrics.bodyAsString());
  }

  private static double moved(Scrape from, Scrape to, String name, String... labels) {
    return to.valueOrZero(name, labels) - from.valueOrZero(name, labels);
  }

  @AfterAll
  void stop() throws Exception {
    h.assertNoSandboxes();
    h.close();
  }

  @Test
  @DisplayName("an execution starts a sandbox cold, runs one ok cell and one search callback, and gives it back")
  void execution() {
    assertThat(moved(before, afterExecution, "quarry_sandbox_cold_start_duration_seconds_count")).isEqualTo(1);
    assertThat(moved(before, afterExecution, "quarry_sandbox_acquire_duration_seconds_count", "source", "cold"))
        .isEqualTo(1);
    assertThat(moved(before, afterExecution, "quarry_sandbox_cells_total", "outcome", "ok")).isEqualTo(1);
    assertThat(moved(before, afterExecution, "quarry_sandbox_cell_duration_seconds_count", "outcome", "ok"))
        .isEqualTo(1);
    assertThat(moved(before, afterExecution, "quarry_callback_duration_seconds_count", "kind", "search",
        "outcome", "ok")).isEqualTo(1);
    assertThat(moved(before, afterExecution, "quarry_sandbox_start_failures_total")).isZero();
    // Given back before the response was sent.
    assertThat(afterExecution.value("quarry_sandboxes_active")).isZero();
    assertThat(afterExecution.value("quarry_sandbox_warm_pool_size")).isZero();
  }

  @Test
  @DisplayName("failed cells are counted by outcome; a cell that ignores its wall time counts a timeout kill")
  void failedCells() {
    assertThat(moved(afterExecution, afterFailedCells, "quarry_sandbox_cells_total", "outcome", "error")).isEqualTo(1);
    assertThat(moved(afterExecution, afterFailedCells, "quarry_sandbox_cells_total", "outcome", "timeout"))
        .isEqualTo(1);
    assertThat(moved(afterExecution, afterFailedCells, "quarry_sandbox_cell_duration_seconds_count", "outcome",
        "timeout")).isEqualTo(1);
    assertThat(moved(afterExecution, afterFailedCells, "quarry_sandbox_kills_total", "reason", "timeout"))
        .isEqualTo(1);
    assertThat(moved(afterExecution, afterFailedCells, "quarry_sandbox_kills_total", "reason", "oom")).isZero();
    assertThat(afterFailedCells.value("quarry_sandboxes_active")).isZero();
  }

  @Test
  @DisplayName("analyses are counted when started and when finished, by status, with their turns")
  void analyses() {
    assertThat(moved(afterFailedCells, afterAnalyses, "quarry_analyses_started_total")).isEqualTo(2);
    assertThat(moved(afterFailedCells, afterAnalyses, "quarry_analyses_finished_total", "status", "succeeded"))
        .isEqualTo(1);
    assertThat(moved(afterFailedCells, afterAnalyses, "quarry_analyses_finished_total", "status", "failed"))
        .isEqualTo(1);
    assertThat(moved(afterFailedCells, afterAnalyses, "quarry_analysis_duration_seconds_count", "status", "succeeded"))
        .isEqualTo(1);
    // Two turns answered in the first analysis; none in the second.
    assertThat(moved(afterFailedCells, afterAnalyses, "quarry_analysis_steps_count")).isEqualTo(2);
    assertThat(moved(afterFailedCells, afterAnalyses, "quarry_analysis_steps_sum")).isEqualTo(2);
    assertThat(afterAnalyses.value("quarry_analyses_running")).isZero();
  }

  @Test
  @DisplayName("model calls are timed, their tokens counted, their retries and final errors counted by kind")
  void modelCalls() {
    assertThat(moved(afterFailedCells, afterAnalyses, "quarry_model_call_duration_seconds_count",
        "purpose", "agent", "outcome", "success")).isEqualTo(2);
    // The scripted model reports 100 tokens in and 20 out per reply.
    assertThat(moved(afterFailedCells, afterAnalyses, "quarry_model_tokens_total", "purpose", "agent",
        "direction", "in")).isEqualTo(200);
    assertThat(moved(afterFailedCells, afterAnalyses, "quarry_model_tokens_total", "purpose", "agent",
        "direction", "out")).isEqualTo(40);
    assertThat(moved(afterFailedCells, afterAnalyses, "quarry_model_call_duration_seconds_count",
        "purpose", "llm", "outcome", "success")).isEqualTo(1);
    // One 500 retried in the first analysis, two of three in the second (the third is final).
    assertThat(moved(afterFailedCells, afterAnalyses, "quarry_model_retries_total", "kind", "server_error"))
        .isEqualTo(3);
    assertThat(moved(afterFailedCells, afterAnalyses, "quarry_model_errors_total", "purpose", "agent",
        "kind", "server_error")).isEqualTo(1);
    assertThat(moved(afterFailedCells, afterAnalyses, "quarry_model_call_duration_seconds_count",
        "purpose", "agent", "outcome", "failure")).isEqualTo(1);
  }

  @Test
  @DisplayName("each analysis' sandbox and the llm() callback move the sandbox and callback meters too")
  void analysisSandbox() {
    // Every analysis gets its sandbox as it starts, the failing one too.
    assertThat(moved(afterFailedCells, afterAnalyses, "quarry_sandbox_acquire_duration_seconds_count")).isEqualTo(2);
    assertThat(moved(afterFailedCells, afterAnalyses, "quarry_sandbox_cells_total", "outcome", "ok")).isEqualTo(1);
    assertThat(moved(afterFailedCells, afterAnalyses, "quarry_callback_duration_seconds_count", "kind", "llm",
        "outcome", "ok")).isEqualTo(1);
    assertThat(afterAnalyses.value("quarry_sandboxes_active")).isZero();
  }

  @Test
  @DisplayName("/readyz reports the configured model endpoint")
  void modelReadiness() {
    assertThat(ready.getJsonObject("checks").getJsonObject("model").getBoolean("ok")).isTrue();
    assertThat(ready.getJsonObject("checks").getJsonObject("model").getString("detail")).contains("scripted-model");
    assertThat(afterAnalyses.value("quarry_dependency_up", "check", "model")).isEqualTo(1);
  }
}
