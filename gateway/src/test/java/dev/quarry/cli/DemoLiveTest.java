package dev.quarry.cli;

import static dev.quarry.agent.ScriptedModelServer.answer;
import static dev.quarry.agent.ScriptedModelServer.execute;
import static dev.quarry.agent.ScriptedModelServer.status;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.agent.AgentHarness;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The demo with a model: its questions asked of the gateway's model (here the scripted model server
 * the tests use, standing in for a live one), each analysis streamed as {@code ask} shows it, then
 * its program replayed twice; and how the demo tells which model a gateway started beside it uses.
 */
@DisplayName("./quarry demo with a model: the questions asked live, streamed and replayed")
class DemoLiveTest {
  static AgentHarness h;
  static List<String> questions;

  @BeforeAll
  static void start() throws Exception {
    h = new AgentHarness(false);
    questions = DemoRecording.read(DemoRecordingTest.shipped()).questions();
    CliRun ingest = CliRun.of("ingest", "--no-progress", "--url", h.gateway.url(), "--api-key", h.gateway.apiKey(),
        CliCommandsTest.corpus().toString());
    assertThat(ingest.exitCode()).as(ingest.err()).isZero();
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

  private static CliRun questions() {
    return CliRun.of("demo", "questions", "--recording", DemoRecordingTest.shipped().toString(),
        "--url", h.gateway.url(), "--api-key", h.gateway.apiKey());
  }

  @Test
  @DisplayName("the model's code, callbacks and output stream, then answer, citations, program, and a replay that matches")
  void asksLive() {
    String fleet = "hits = await search('vessels passengers cars usual route', limit=3)\n"
        + "print(sorted({h['document_title'] for h in hits if 'Usual route' in h['content']}))";
    String fares = "hits = await search('single fares in euros', limit=3)\n"
        + "print(sorted({h['document_title'] for h in hits if 'Single fare' in h['content']}))";
    h.model.then(execute(fleet), answer("The fleet table is in the handbook.", fleet),
        execute(fares), answer("The fares are in the timetable.", fares));
    CliRun run = questions();
    assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
    assertThat(run.out()).contains("━━ Question 1 of 2: " + questions.get(0), "━━ Question 2 of 2: " + questions.get(1),
        "(scripted-model)", "── step 1 ──", "  │ hits = await search('vessels passengers cars usual route', limit=3)",
        "  ↪ search ", "  > ['Halvard Sound Ferries: Fleet Handbook']",
        "Answer:\nThe fleet table is in the handbook.", "Citations:\n  - Halvard Sound Ferries: Fleet Handbook",
        "Program:\nhits = await search('vessels", "Answer:\nThe fares are in the timetable.",
        "Replay: the program alone, in a fresh sandbox", "its output is now the baseline (recorded)",
        "✓ the output matches the first replay's", "━━ 2 of 2 questions answered and replayed with the same output");
    // Streamed as it happened: the first analysis' step before its answer, before the second question.
    assertThat(run.out().indexOf("── step 1 ──")).isLessThan(run.out().indexOf("Answer:"));
    assertThat(run.out().indexOf("✓ the output matches")).isLessThan(run.out().indexOf("━━ Question 2 of 2"));
    // The model was asked the demo's questions, word for word.
    assertThat(h.model.requests()).extracting(r -> r.getJsonArray("messages").getJsonObject(1).getString("content"))
        .contains("Question: " + questions.get(0), "Question: " + questions.get(1));
  }

  @Test
  @DisplayName("a question the model does not answer is reported, the others still asked, and the exit code is 1")
  void modelFails() {
    String code = "print(len(await list_documents()))";
    h.model.then(status(500), status(500), status(500), execute(code), answer("Five documents.", code));
    CliRun run = questions();
    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.out()).contains("The analysis ended without an answer (failed): ModelUnavailable",
        "Answer:\nFive documents.", "━━ 1 of 2 questions answered and replayed with the same output", ": no answer");
  }

  @Test
  @DisplayName("'demo model' reads the model as a gateway started beside it would: the environment over the settings file")
  void whichModel(@TempDir Path dir) throws Exception {
    assertThat(model(Map.of())).isEqualTo("none");
    assertThat(model(Map.of("OPENAI_BASE_URL", "http://127.0.0.1:9/v1", "QUARRY_MODEL", "m1")))
        .isEqualTo("http://127.0.0.1:9/v1 (model m1)");
    assertThat(model(Map.of("OPENAI_BASE_URL", "http://a/v1", "QUARRY_MODEL_BASE_URL", "http://b/v1")))
        .isEqualTo("http://b/v1 (model gpt-4.1-mini)");
    Path file = Files.writeString(dir.resolve("quarry.properties"), "QUARRY_MODEL_BASE_URL=http://file/v1\n");
    assertThat(model(Map.of("QUARRY_CONFIG_FILE", file.toString()))).isEqualTo("http://file/v1 (model gpt-4.1-mini)");
  }

  /** {@code quarry demo model} in a JVM of its own, with exactly this environment. */
  private static String model(Map<String, String> env) throws Exception {
    ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), Main.class.getName(), "demo", "model");
    pb.environment().clear();
    pb.environment().putAll(env);
    Process p = pb.redirectError(ProcessBuilder.Redirect.INHERIT).start();
    String out = new String(p.getInputStream().readAllBytes()).strip();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    return out;
  }
}
