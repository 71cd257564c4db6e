package dev.quarry.agent;

import static dev.quarry.agent.ScriptedModelServer.answer;
import static dev.quarry.agent.ScriptedModelServer.execute;
import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A store that refuses part of an analysis' record: PostgreSQL itself refuses it, through a trigger
 * this test adds to its own database.
 */
@DisplayName("An analysis whose record PostgreSQL refuses to store")
class AnalysisStorageFailureTest {
  static AgentHarness h;

  @BeforeAll
  static void start() throws Exception {
    h = new AgentHarness(true);
    try (Connection c = h.gateway.database().jdbc(); Statement s = c.createStatement()) {
      s.execute("CREATE FUNCTION refuse_marked_step() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
          + " IF NEW.code LIKE '%refuse-me%' THEN RAISE EXCEPTION 'step refused by the test'; END IF;"
          + " RETURN NEW; END $$");
      s.execute("CREATE TRIGGER refuse_marked_step BEFORE INSERT ON analysis_steps FOR EACH ROW"
          + " EXECUTE FUNCTION refuse_marked_step()");
    }
  }

  @AfterAll
  static void stop() throws Exception {
    h.close();
  }

  @Test
  @DisplayName("a step that cannot be stored ends the analysis as StorageFailed, not as a success with a gap,"
      + " and the terminal event is still stored")
  void stepRefused() throws Exception {
    h.model.then(execute("print('refuse-me')"), answer("done", "print('refuse-me')"));
    var r = h.post("/v1/analyses", new JsonObject().put("question", "Is a lost step noticed?"));
    assertThat(r.statusCode()).as(r.bodyAsString()).isEqualTo(200);
    JsonObject analysis = r.bodyAsJsonObject();
    assertThat(analysis.getString("status")).isEqualTo("failed");
    assertThat(analysis.getJsonObject("error").getString("type")).isEqualTo("StorageFailed");
    assertThat(analysis.getJsonObject("error").getString("message")).doesNotContain("refused by the test");
    assertThat(analysis.getString("answer")).isNull();

    String sse = h.gateway.client().get("/v1/analyses/" + analysis.getString("id") + "/events").send().await()
        .bodyAsString();
    List<String> types = new ArrayList<>();
    for (String line : sse.split("\n")) {
      if (line.startsWith("event: ")) {
        types.add(line.substring(7));
      }
    }
    assertThat(types).first().isEqualTo(AnalysisEvent.STARTED);
    assertThat(types).last().isEqualTo(AnalysisEvent.FAILED);
    assertThat(types).as("the refused step's batch, events included, is what is missing")
        .doesNotContain(AnalysisEvent.CELL_RESULT);
    h.assertNoSandboxes();
  }
}
