package dev.quarry.agent;

import static dev.quarry.agent.ScriptedModelServer.answer;
import static dev.quarry.agent.ScriptedModelServer.execute;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.sandbox.HostileRunner;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * llm() calls a runner taken over by its code sends all at once ({@link HostileRunner}'s {@code
 * #flood N llm}): the restricted language cannot make two calls at once, but the gateway treats the
 * runner's stream as untrusted, so the analysis' token budget must hold against them too.
 */
@DisplayName("llm() calls sent at once by a hostile runner stay within the analysis' tokens together")
class ForgedLlmCallsTest {
  static AgentHarness h;

  @BeforeAll
  static void start() throws Exception {
    h = new AgentHarness(HostileRunner.ensure(), a -> a);
  }

  @AfterAll
  static void stop() throws Exception {
    h.close();
  }

  @Test
  @DisplayName("eight calls at once, each answered by a model that writes to its bound, spend at most what the turn left")
  void callsAtOnceShareTheBudget() throws Exception {
    h.model.llmToTheBound().then(execute("#flood 8 llm 0"), answer("asked", "print(1)"));
    var r = h.post("/v1/analyses", new JsonObject().put("question", "Ask the model eight times at once?")
        .put("budgets", new JsonObject().put("tokens", 5000)));
    assertThat(r.statusCode()).as(r.bodyAsString()).isEqualTo(200);
    JsonObject analysis = r.bodyAsJsonObject();
    assertThat(analysis.getString("status")).as(analysis.encodePrettily()).isEqualTo("succeeded");
    String stdout = analysis.getJsonArray("steps").getJsonObject(0).getJsonObject("result").getString("stdout");
    assertThat(stdout).as(analysis.encodePrettily()).contains("ok=");
    List<JsonObject> llm = h.model.llmRequests();
    assertThat(llm).hasSizeGreaterThan(1);
    // What the calls cost as the model reported it: 'hello' is 2 tokens, then the whole bound.
    long spent = 0;
    for (JsonObject request : llm) {
      spent += 2 + request.getLong("max_completion_tokens");
    }
    // The first turn (the scripted 120 tokens) came before the cell; the calls had the rest.
    assertThat(spent).as("tokens of " + llm.size() + " llm() calls").isBetween(1L, 5000L - 120);
    h.model.reset();
    h.assertNoSandboxes();
  }
}
