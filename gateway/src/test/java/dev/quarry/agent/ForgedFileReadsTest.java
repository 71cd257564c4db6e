package dev.quarry.agent;

import static dev.quarry.agent.ScriptedModelServer.answer;
import static dev.quarry.agent.ScriptedModelServer.execute;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.sandbox.HostileRunner;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Red team round 5, R5-3: a runner taken over by the sandbox's code reports file reads of its own
 * making ({@link HostileRunner}'s {@code #fileread}); only documents that exist and are in the
 * analysis' scope become citations, once each.
 */
@DisplayName("Forged file reads do not become citations")
class ForgedFileReadsTest {
  static AgentHarness h;
  static UUID duck;
  static UUID word;

  @BeforeAll
  static void start() throws Exception {
    h = new AgentHarness(HostileRunner.ensure(), a -> a);
    duck = h.ingest("docling/html/wiki_duck.html");
    word = h.ingest("docling/docx/word_sample.docx");
  }

  @AfterAll
  static void stop() throws Exception {
    h.close();
  }

  @Test
  @DisplayName("3,000 made-up ids and a document outside the scope are not cited; the read document in scope is, once")
  void onlyExistingDocumentsInScopeAreCited() throws Exception {
    h.model.then(execute("#fileread 3000 " + duck + " " + word + " " + duck), answer("read", "print(1)"));
    var r = h.post("/v1/analyses", new JsonObject().put("question", "Read files?")
        .put("document_ids", new JsonArray().add(duck.toString())));
    assertThat(r.statusCode()).as(r.bodyAsString()).isEqualTo(200);
    JsonObject analysis = r.bodyAsJsonObject();
    assertThat(analysis.getString("status")).as(analysis.encodePrettily()).isEqualTo("succeeded");
    JsonArray citations = analysis.getJsonArray("citations");
    assertThat(citations).hasSize(1);
    JsonObject cited = citations.getJsonObject(0);
    assertThat(cited.getString("document_id")).isEqualTo(duck.toString());
    assertThat(cited.getString("title")).isNotBlank();
    assertThat(cited.getJsonArray("via").getList()).containsExactly("file");
    assertThat(h.model.remaining()).isZero();
    h.assertNoSandboxes();
  }
}
