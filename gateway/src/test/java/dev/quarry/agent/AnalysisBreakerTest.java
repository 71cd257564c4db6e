package dev.quarry.agent;

import static dev.quarry.agent.ScriptedModelServer.answer;
import static dev.quarry.agent.ScriptedModelServer.execute;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.sandbox.RunnerImage;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The model's circuit breaker, shared by every tenant, is not opened by analyses whose own short
 * wall time cuts their model turns (red team round 6, R6-3).
 */
@DisplayName("Analyses cut by their own wall time do not open the shared circuit breaker")
class AnalysisBreakerTest {
  static AgentHarness h;

  @BeforeAll
  static void start() throws Exception {
    // A breaker that opens after 2 failures for 30 s: before the fix, 2 such analyses opened it.
    h = new AgentHarness(RunnerImage.ensure(),
        a -> a.withRetries(3, Duration.ofMillis(20), Duration.ofMillis(200), 2, Duration.ofSeconds(30)));
  }

  @AfterAll
  static void stop() throws Exception {
    h.close();
  }

  @Test
  @DisplayName("3 analyses of 1.5 s whose model turn outlives them end budget_exhausted (wall_time_ms); the next"
      + " analysis is answered at once")
  void shortWallTimesDoNotOpenTheBreaker() throws Exception {
    ScriptedModelServer.Held[] held = new ScriptedModelServer.Held[3];
    try {
      for (int i = 0; i < held.length; i++) {
        held[i] = new ScriptedModelServer.Held();
        h.model.then(held[i]);
        var r = h.post("/v1/analyses", new JsonObject().put("question", "Slow " + i + "?").put("stream", false)
            .put("budgets", new JsonObject().put("wall_time_ms", 1_500)));
        assertThat(r.statusCode()).as(r.bodyAsString()).isEqualTo(200);
        JsonObject analysis = r.bodyAsJsonObject();
        assertThat(analysis.getString("status")).as(analysis.encode()).isEqualTo("budget_exhausted");
        assertThat(analysis.encode()).contains("wall_time_ms");
      }
      assertThat(h.model.requests()).as("each cut turn was asked once, not retried").hasSize(3);

      h.model.then(execute("print(1 + 1)"), answer("2", "print(1 + 1)"));
      long started = System.nanoTime();
      var r = h.post("/v1/analyses", new JsonObject().put("question", "One plus one?").put("stream", false));
      assertThat(r.bodyAsJsonObject().getString("status")).as(r.bodyAsString()).isEqualTo("succeeded");
      assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));
    } finally {
      for (ScriptedModelServer.Held x : held) {
        if (x != null) {
          x.reply().complete(ScriptedModelServer.message("late"));
        }
      }
      h.model.reset();
    }
    h.assertNoSandboxes();
  }
}
