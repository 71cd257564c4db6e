package dev.quarry.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The recorded model's choice of reply, from requests shaped as the gateway's agent sends them. */
@DisplayName("The demo's recording and the replies of the recorded model")
class DemoRecordingTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  static Path shipped() {
    Path here = Path.of("").toAbsolutePath();
    Path file = here.resolve("examples/demo/recording.json");
    return Files.isRegularFile(file) ? file : here.getParent().resolve("examples/demo/recording.json");
  }

  private static final DemoRecording TWO_TURNS = DemoRecording.parse(json("""
      {"model": "m", "analyses": [{"question": "How many?", "answer": "Two.", "program": "print(2)",
        "turns": [{"code": "print(1)", "stdout": "1\\n"}, {"code": "print(2)", "stdout": "2\\n"}]}]}"""), "test");

  private static JsonNode json(String text) {
    try {
      return JSON.readTree(text);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  /** A request as the agent makes it: system prompt, the question, then a tool call and result per step. */
  private static ObjectNode request(String question, String... stdouts) {
    ObjectNode r = JSON.createObjectNode().put("model", "m");
    r.putArray("tools").addObject().put("type", "function").putObject("function").put("name", "execute_code")
        .putObject("parameters").put("type", "object").putObject("properties").putObject("code").put("type", "string");
    ArrayNode messages = r.putArray("messages");
    messages.addObject().put("role", "system").put("content", "the prompt");
    messages.addObject().put("role", "user").put("content", "Question: " + question
        + "\n\nThis analysis is scoped to these documents only: 0.");
    for (int i = 0; i < stdouts.length; i++) {
      messages.addObject().put("role", "assistant").putArray("tool_calls").addObject().put("id", "c" + i);
      ObjectNode result = JSON.createObjectNode().put("success", true).put("stdout", stdouts[i]).put("stderr", "")
          .putNull("error").put("truncated", false).put("duration_ms", 5);
      messages.addObject().put("role", "tool").put("tool_call_id", "c" + i).put("content", result.toString());
    }
    return r;
  }

  private static String code(DemoRecording.Reply reply) {
    JsonNode message = reply.body().path("choices").path(0).path("message");
    return json(message.path("tool_calls").path(0).path("function").path("arguments").asText()).path("code").asText();
  }

  @Test
  @DisplayName("the shipped recording reads, and every analysis has code before its answer")
  void shippedReads() {
    DemoRecording recording = DemoRecording.read(shipped());
    assertThat(recording.analyses()).hasSize(2);
    assertThat(recording.analyses()).allSatisfy(a -> {
      assertThat(a.turns()).isNotEmpty();
      assertThat(a.program()).isNotBlank();
    });
  }

  @Test
  @DisplayName("each request gets the next recorded turn, then the final answer and program")
  void turnByTurn() {
    DemoRecording.Reply first = TWO_TURNS.reply(request("How many?"));
    assertThat(first.status()).isEqualTo(200);
    assertThat(code(first)).isEqualTo("print(1)");
    assertThat(first.body().path("choices").path(0).path("finish_reason").asText()).isEqualTo("tool_calls");
    assertThat(code(TWO_TURNS.reply(request("How many?", "1\n")))).isEqualTo("print(2)");
    DemoRecording.Reply last = TWO_TURNS.reply(request("How many?", "1\n", "2\n"));
    JsonNode answer = json(last.body().path("choices").path(0).path("message").path("content").asText());
    assertThat(answer.path("answer").asText()).isEqualTo("Two.");
    assertThat(answer.path("program").asText()).isEqualTo("print(2)");
  }

  @Property(tries = 200)
  @Label("any output other than the recorded one is answered as a stale recording, never with the next turn")
  void otherOutputIsStale(@ForAll String printed) {
    DemoRecording.Reply reply = TWO_TURNS.reply(request("How many?", printed));
    if (printed.equals("1\n")) {
      assertThat(reply.status()).isEqualTo(200);
    } else {
      assertThat(reply.status()).isEqualTo(409);
      assertThat(reply.body().path("error").path("message").asText())
          .startsWith("the recording is stale: step 1 of \"How many?\"");
    }
  }

  @Property(tries = 200)
  @Label("a question that is not recorded gets a 400 that says how to ask it of a real model")
  void unknownQuestion(@ForAll String question) {
    DemoRecording.Reply reply = TWO_TURNS.reply(request(question));
    if (question.equals("How many?")) {
      assertThat(reply.status()).isEqualTo(200);
    } else {
      assertThat(reply.status()).isEqualTo(400);
      assertThat(reply.body().path("error").path("message").asText()).contains("./quarry demo --model URL");
    }
  }

  @Test
  @DisplayName("a failed step, a correction turn, a missing tool or an llm() call is refused, saying why")
  void offTheRecording() {
    ObjectNode failed = request("How many?");
    ObjectNode result = JSON.createObjectNode().put("success", false).put("stdout", "");
    result.putObject("error").put("type", "KeyError").put("message", "'title'");
    ((ArrayNode) failed.path("messages")).addObject().put("role", "tool").put("content", result.toString());
    assertThat(TWO_TURNS.reply(failed).body().toString()).contains("stale", "failed: KeyError");

    ObjectNode corrected = request("How many?", "1\n");
    ((ArrayNode) corrected.path("messages")).addObject().put("role", "user").put("content", "Run code first.");
    assertThat(TWO_TURNS.reply(corrected).status()).isEqualTo(409);

    ObjectNode noTool = request("How many?");
    noTool.putArray("tools");
    assertThat(TWO_TURNS.reply(noTool).body().toString()).contains("no longer offers the tool execute_code");

    ObjectNode llm = request("How many?");
    llm.remove("tools");
    assertThat(TWO_TURNS.reply(llm).status()).isEqualTo(400);
  }

  @Test
  @DisplayName("a recording that breaks the format is refused, naming the place")
  void badRecordings() {
    assertThatThrownBy(() -> DemoRecording.parse(json("{\"model\": \"m\", \"analyses\": []}"), "r"))
        .hasMessageContaining("\"analyses\" must be a non-empty array");
    assertThatThrownBy(() -> DemoRecording.parse(json("""
        {"model": "m", "analyses": [{"question": "Q", "answer": "A", "program": "p", "turns": []}]}"""), "r"))
        .hasMessageContaining("analysis 1: \"turns\" must be a non-empty array");
    assertThatThrownBy(() -> DemoRecording.parse(json("""
        {"model": "m", "analyses": [{"question": "Q", "answer": "A", "program": "p", "turns": [{"code": "x"}]},
          {"question": "Q", "answer": "A", "program": "p", "turns": [{"code": "x", "stdout": ""}]}]}"""), "r"))
        .hasMessageContaining("turn 1: \"stdout\" must be a string");
    assertThatThrownBy(() -> DemoRecording.parse(json("""
        {"model": "m", "analyses": [{"question": "Q", "answer": "A", "program": "p", "turns": [{"code": "x", "stdout": ""}]},
          {"question": "Q", "answer": "A", "program": "p", "turns": [{"code": "x", "stdout": ""}]}]}"""), "r"))
        .hasMessageContaining("recorded twice");
  }
}
