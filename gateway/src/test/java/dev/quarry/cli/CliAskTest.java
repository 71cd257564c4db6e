package dev.quarry.cli;

import static dev.quarry.agent.ScriptedModelServer.answer;
import static dev.quarry.agent.ScriptedModelServer.execute;
import static dev.quarry.agent.ScriptedModelServer.status;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.agent.AgentHarness;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("quarry ask")
class CliAskTest {
  static AgentHarness h;
  static UUID duck;

  @BeforeAll
  static void start() throws Exception {
    h = new AgentHarness(false);
    duck = h.ingest("docling/html/wiki_duck.html");
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

  @Test
  @DisplayName("streams the steps, then prints the answer, its citations and the program")
  void asks() {
    h.model.then(execute("hits = await search('duck', limit=1)\nprint(hits[0]['document_title'])"),
        answer("Ducks are waterfowl.", "hits = await search('duck', limit=1)\nprint(hits[0]['document_title'])"));
    CliRun run = CliRun.of("ask", "--url", h.gateway.url(), "--api-key", h.gateway.apiKey(), "What", "are", "ducks?");
    assertThat(run.exitCode()).as(run.err()).isZero();
    assertThat(run.out()).contains("── step 1 ──", "  │ hits = await search('duck', limit=1)", "↪ search",
        "✓", "Answer:\nDucks are waterfowl.", "Citations:", duck.toString(), "Program:\nhits = await search");
    assertThat(run.out().indexOf("── step 1 ──")).isLessThan(run.out().indexOf("Answer:"));
    assertThat(h.model.requests().get(0).getJsonArray("messages").getJsonObject(1).getString("content"))
        .isEqualTo("Question: What are ducks?");
  }

  @Test
  @DisplayName("an analysis that fails says why and exits with 1")
  void fails() {
    h.model.then(status(500), status(500), status(500));
    CliRun run = CliRun.of("ask", "--url", h.gateway.url(), "--api-key", h.gateway.apiKey(), "Is", "the", "model", "up?");
    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.out()).contains("ended without an answer (failed): ModelUnavailable");
  }

  @Test
  @DisplayName("with --json too, an analysis that fails exits with 1 after its events")
  void failsAsJson() {
    h.model.then(status(500), status(500), status(500));
    CliRun run = CliRun.of("ask", "--json", "--url", h.gateway.url(), "--api-key", h.gateway.apiKey(), "Still", "down?");
    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.out()).contains("\"type\":\"failed\"", "ModelUnavailable");
  }
}
