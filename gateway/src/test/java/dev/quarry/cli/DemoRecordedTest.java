package dev.quarry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.agent.AgentHarness;
import dev.quarry.api.TestGateway;
import dev.quarry.sandbox.RunnerImage;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The demo without a model: examples/demo/recording.json played by the recorded-model server
 * through a real gateway (PostgreSQL, sandboxes, search, replays) over the example corpus as it is,
 * by the command the demo runs. When the corpus or the contract moves, the code's output no longer
 * matches the recording, the recorded model refuses to go on, and this test says the recording is
 * stale.
 */
@DisplayName("./quarry demo without a model: the recording played through a real gateway")
class DemoRecordedTest {
  static DemoRecording recording;
  static RecordedModelServer recorded;
  static AgentHarness h;

  @BeforeAll
  static void start() throws Exception {
    recording = DemoRecording.read(DemoRecordingTest.shipped());
    recorded = RecordedModelServer.start(recording, 0);
    h = new AgentHarness(RunnerImage.ensure(), a -> a.withEndpoint(recorded.baseUrl(), "recorded-demo", "recorded-demo-model"));
    CliRun ingest = CliRun.of("ingest", "--no-progress", "--url", h.gateway.url(), "--api-key", h.gateway.apiKey(),
        CliCommandsTest.corpus().toString());
    assertThat(ingest.exitCode()).as(ingest.err()).isZero();
  }

  @AfterAll
  static void stop() throws Exception {
    try {
      h.close();
    } finally {
      recorded.close();
    }
  }

  private static CliRun questions(String apiKey) {
    return CliRun.of("demo", "questions", "--recording", DemoRecordingTest.shipped().toString(),
        "--url", h.gateway.url(), "--api-key", apiKey);
  }

  @Test
  @DisplayName("each recorded analysis streams its steps, answers with citations, and its program replays the same")
  void playsThrough() throws Exception {
    CliRun run = questions(h.gateway.apiKey());
    assertThat(run.out())
        .as("examples/demo/recording.json is stale: its code no longer prints what was recorded over"
            + " examples/corpus (see the step and line named below); re-record its stdout, and its answer if"
            + " the figures moved\n" + run.out())
        .doesNotContain("the recording is stale");
    assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
    for (DemoRecording.Analysis a : recording.analyses()) {
      assertThat(run.out()).contains(a.question(), "Answer:\n" + a.answer(), "Program:\n" + a.program().strip());
      for (DemoRecording.Turn t : a.turns()) {
        // Each step's output streams as `ask` prints it: the recorded stdout, line by line.
        t.stdout().lines().forEach(line -> assertThat(run.out()).contains("  > " + line));
      }
    }
    assertThat(run.out()).contains("── step 1 ──", "  ↪ search", "  ✓ ", "Citations:\n  - ",
        "✓ the output matches the first replay's", "━━ 2 of 2 questions answered and replayed with the same output");

    // The gateway kept them as analyses of the tenant (what the console's Analyses lists), each
    // succeeded, citing the documents its code read, with a replay baseline.
    JsonArray listed = h.gateway.client().get("/v1/analyses?limit=50").send().await().bodyAsJsonObject()
        .getJsonArray("analyses");
    List<String> questions = recording.questions();
    List<JsonObject> demo = listed.stream().map(o -> (JsonObject) o)
        .filter(a -> questions.contains(a.getString("question"))).toList();
    assertThat(demo).hasSize(2);
    for (JsonObject listedOne : demo) {
      JsonObject analysis = h.gateway.client().get("/v1/analyses/" + listedOne.getString("id")).send().await()
          .bodyAsJsonObject();
      assertThat(analysis.getString("status")).as(analysis.encode()).isEqualTo("succeeded");
      assertThat(analysis.getJsonArray("citations")).as(analysis.encode()).isNotEmpty();
      assertThat(analysis.getString("program_output")).as("the first replay's output, kept as the baseline").isNotBlank();
    }
    h.assertNoSandboxes();
  }

  @Test
  @DisplayName("over a corpus whose figures changed, the recorded model says the recording is stale and no answer is shown")
  void staleCorpus(@TempDir Path dir) throws Exception {
    Path corpus = Files.createDirectories(dir.resolve("corpus"));
    try (Stream<Path> files = Files.list(CliCommandsTest.corpus())) {
      for (Path f : files.toList()) {
        Files.copy(f, corpus.resolve(f.getFileName()));
      }
    }
    Path handbook = corpus.resolve("fleet-handbook.md");
    String original = Files.readString(handbook);
    String changed = original.replace("| MV Tollan Wren | 2016 | 35.2 | 120 |", "| MV Tollan Wren | 2016 | 35.2 | 150 |");
    assertThat(changed).as("the handbook's fleet table row this test changes").isNotEqualTo(original);
    Files.writeString(handbook, changed);
    TestGateway.NewTenant tenant = h.gateway.createTenant("changed-corpus");
    CliRun ingest = CliRun.of("ingest", "--no-progress", "--url", h.gateway.url(), "--api-key", tenant.apiKey(), corpus.toString());
    assertThat(ingest.exitCode()).as(ingest.err()).isZero();

    CliRun run = questions(tenant.apiKey());
    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.out()).contains("ModelRejected", "the recording is stale: step ", "━━ 1 of 2 questions answered");
    assertThat(run.out()).doesNotContain("Answer:\n" + recording.analyses().get(0).answer());
    h.assertNoSandboxes();
  }

  @Test
  @DisplayName("a question of the user's own is refused by the recorded model with the way to a real one")
  void ownQuestion() {
    CliRun run = CliRun.of("ask", "--url", h.gateway.url(), "--api-key", h.gateway.apiKey(), "Which", "ship", "is", "fastest?");
    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.out()).contains("ModelRejected", "recorded demo model", "./quarry demo --model URL");
    assertThat(List.of(run.out())).noneMatch(o -> o.contains("Answer:"));
  }
}
