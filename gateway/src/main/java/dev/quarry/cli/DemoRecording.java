package dev.quarry.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The demo's recorded analyses (examples/demo/recording.json): for each question, the code the model
 * wrote turn by turn with what that code printed when it was recorded, then its final answer and
 * program. {@link #reply} answers a chat completions request of the gateway with the next recorded
 * turn, chosen from the request alone (its question, and how many tool results it carries), so the
 * recorded-model server keeps no state and any number of analyses can run at once.
 *
 * <p>Every tool result the gateway sends back is compared with the recorded output: the recorded
 * answer is only true of the corpus and contract it was recorded against, so when the code's output
 * differs (a document changed, a key of the contract renamed) the reply is an error that says the
 * recording is stale, and the analysis fails instead of showing an answer its own steps contradict.
 */
record DemoRecording(String model, List<Analysis> analyses) {
  private static final ObjectMapper JSON = new ObjectMapper();
  /** What may follow the question in the agent's first user message: its scope, its preloaded documents. */
  private static final Pattern AFTER_QUESTION = Pattern.compile("\\n\\n(This analysis is scoped|The variable `documents`)");
  /** Bounds what one recording may hold: it is read whole, and every reply scans it. */
  static final long MAX_FILE_BYTES = 1 << 20;
  static final String TOOL = "execute_code";
  static final String ADVICE = "to ask your own questions, run the demo with a real model: ./quarry demo --model URL";

  /** One model turn: the code of its {@code execute_code} call, and what that code printed when recorded. */
  record Turn(String code, String stdout) {}

  /** One recorded analysis: the question, its turns, then the final answer and program. */
  record Analysis(String question, List<Turn> turns, String answer, String program) {}

  /** A reply to one request: its HTTP status and JSON body. */
  record Reply(int status, ObjectNode body) {}

  static DemoRecording read(Path file) {
    JsonNode root;
    try {
      if (Files.size(file) > MAX_FILE_BYTES) {
        throw new CliFailure(file + " is over " + MAX_FILE_BYTES + " bytes; a recording is a few analyses");
      }
      root = JSON.readTree(Files.readString(file));
    } catch (NoSuchFileException e) {
      throw new CliFailure("no such recording: " + file);
    } catch (JsonProcessingException e) {
      throw new CliFailure(file + " is not JSON: " + e.getOriginalMessage());
    } catch (IOException e) {
      throw new CliFailure("cannot read " + file + ": " + e.getMessage());
    }
    return parse(root, file.toString());
  }

  static DemoRecording parse(JsonNode root, String name) {
    String model = text(root, "model", name);
    List<Analysis> analyses = new ArrayList<>();
    Set<String> questions = new HashSet<>();
    JsonNode list = root.path("analyses");
    if (!list.isArray() || list.isEmpty()) {
      throw new CliFailure(name + ": \"analyses\" must be a non-empty array");
    }
    for (JsonNode a : list) {
      String where = name + ": analysis " + (analyses.size() + 1);
      String question = text(a, "question", where);
      if (question.contains("\n") || !question.equals(question.strip())) {
        throw new CliFailure(where + ": the question must be one line without surrounding spaces");
      }
      if (!questions.add(question)) {
        throw new CliFailure(where + ": the question \"" + question + "\" is recorded twice");
      }
      List<Turn> turns = new ArrayList<>();
      JsonNode recorded = a.path("turns");
      if (!recorded.isArray() || recorded.isEmpty()) {
        throw new CliFailure(where + ": \"turns\" must be a non-empty array (the contract: code runs before an answer)");
      }
      for (JsonNode t : recorded) {
        String turn = where + ", turn " + (turns.size() + 1);
        turns.add(new Turn(text(t, "code", turn), stringOrEmpty(t, "stdout", turn)));
      }
      analyses.add(new Analysis(question, List.copyOf(turns), text(a, "answer", where), text(a, "program", where)));
    }
    return new DemoRecording(model, List.copyOf(analyses));
  }

  private static String text(JsonNode node, String field, String where) {
    JsonNode v = node.path(field);
    if (!v.isTextual() || v.asText().isBlank()) {
      throw new CliFailure(where + ": \"" + field + "\" must be a non-empty string");
    }
    return v.asText();
  }

  private static String stringOrEmpty(JsonNode node, String field, String where) {
    JsonNode v = node.path(field);
    if (!v.isTextual()) {
      throw new CliFailure(where + ": \"" + field + "\" must be a string (what the code printed, maybe empty)");
    }
    return v.asText();
  }

  List<String> questions() {
    return analyses.stream().map(Analysis::question).toList();
  }

  /** The next recorded turn for one chat completions request, or an error saying why there is none. */
  Reply reply(JsonNode request) {
    if (!request.has("tools")) {
      // The agent calls with its tool; only a sandbox's llm() asks without one.
      return error(400, "not_recorded", "the recording holds no llm() replies (the recorded code never calls"
          + " llm()); " + ADVICE);
    }
    if (!offersTool(request.path("tools"))) {
      return stale("the gateway no longer offers the tool " + TOOL + "(code) that the recorded turns call");
    }
    JsonNode messages = request.path("messages");
    String first = null;
    List<JsonNode> results = new ArrayList<>();
    int users = 0;
    for (JsonNode m : messages) {
      switch (m.path("role").asText()) {
        case "user" -> {
          users++;
          if (first == null) {
            first = m.path("content").asText("");
          }
        }
        case "tool" -> results.add(m);
        default -> { }
      }
    }
    Analysis analysis = first == null ? null : find(first);
    if (analysis == null) {
      return error(400, "question_not_recorded", "this is Quarry's recorded demo model: it knows only the demo's "
          + analyses.size() + " questions; " + ADVICE);
    }
    if (users > 1) {
      // A second user message is the gateway's correction turn: the analysis left the recorded path.
      return stale("the gateway asked the model to correct a recorded turn (" + firstLine(lastUser(messages)) + ")");
    }
    if (results.size() > analysis.turns().size()) {
      return stale("the gateway sent more tool results than there are recorded turns");
    }
    for (int i = 0; i < results.size(); i++) {
      String problem = differs(analysis.turns().get(i), results.get(i));
      if (problem != null) {
        return stale("step " + (i + 1) + " of \"" + analysis.question() + "\" " + problem);
      }
    }
    if (results.size() < analysis.turns().size()) {
      return new Reply(200, toolCall(analysis.turns().get(results.size()).code(), analysis, results.size()));
    }
    ObjectNode answer = JSON.createObjectNode().put("answer", analysis.answer()).put("program", analysis.program());
    ObjectNode message = JSON.createObjectNode().put("role", "assistant").put("content", answer.toString());
    return new Reply(200, completion(message, "stop", analysis, results.size()));
  }

  /**
   * The recorded analysis whose question the agent's first user message asks: that message is the
   * question after "Question: ", preceded by the earlier turns of a conversation, if any, and
   * followed by a paragraph naming the scope or the preloaded documents, if any (AnalysisRun).
   */
  private Analysis find(String firstUserMessage) {
    for (Analysis a : analyses) {
      String marker = "Question: " + a.question();
      int at = firstUserMessage.lastIndexOf(marker);
      if (at < 0 || (at > 0 && firstUserMessage.charAt(at - 1) != '\n')) {
        continue;
      }
      String rest = firstUserMessage.substring(at + marker.length());
      if (rest.isEmpty() || AFTER_QUESTION.matcher(rest).lookingAt()) {
        return a;
      }
    }
    return null;
  }

  private static boolean offersTool(JsonNode tools) {
    for (JsonNode t : tools) {
      JsonNode f = t.path("function");
      if (TOOL.equals(f.path("name").asText()) && f.path("parameters").path("properties").has("code")) {
        return true;
      }
    }
    return false;
  }

  /** Why a tool result is not what the recorded turn printed, or null when it is. */
  private static String differs(Turn turn, JsonNode toolMessage) {
    JsonNode result;
    try {
      result = JSON.readTree(toolMessage.path("content").asText(""));
    } catch (JsonProcessingException e) {
      return "came back as something other than the contract's tool result (not JSON)";
    }
    if (!result.path("success").asBoolean(false)) {
      JsonNode error = result.path("error");
      return "failed: " + error.path("type").asText("?") + ": " + firstLine(error.path("message").asText(""));
    }
    String stdout = result.path("stdout").asText(null);
    if (stdout == null) {
      return "came back without the contract's \"stdout\"";
    }
    if (stdout.equals(turn.stdout())) {
      return null;
    }
    List<String> got = stdout.lines().toList();
    List<String> want = turn.stdout().lines().toList();
    for (int line = 0; line < Math.max(got.size(), want.size()); line++) {
      String g = line < got.size() ? got.get(line) : "(nothing)";
      String w = line < want.size() ? want.get(line) : "(nothing)";
      if (!g.equals(w)) {
        return "printed something else at line " + (line + 1) + ": " + clip(g) + " where the recording has " + clip(w);
      }
    }
    return "printed something else (whitespace)";
  }

  private static String lastUser(JsonNode messages) {
    String last = "";
    for (JsonNode m : messages) {
      if ("user".equals(m.path("role").asText())) {
        last = m.path("content").asText("");
      }
    }
    return last;
  }

  private static String firstLine(String text) {
    return clip(text.strip().lines().findFirst().orElse(""));
  }

  private static String clip(String s) {
    return '"' + (s.length() > 60 ? s.substring(0, 60) + "…" : s) + '"';
  }

  private static Reply stale(String why) {
    // Short first: the gateway keeps the first few hundred characters of an endpoint's refusal.
    return error(409, "recording_stale", "the recording is stale: " + why
        + "; re-record examples/demo/recording.json against the example corpus");
  }

  private static Reply error(int status, String code, String message) {
    ObjectNode body = JSON.createObjectNode();
    body.putObject("error").put("message", message).put("type", code).putNull("param").put("code", code);
    return new Reply(status, body);
  }

  private ObjectNode toolCall(String code, Analysis analysis, int step) {
    ObjectNode message = JSON.createObjectNode().put("role", "assistant").putNull("content");
    ArrayNode calls = message.putArray("tool_calls");
    ObjectNode call = calls.addObject().put("id", "call_" + analyses.indexOf(analysis) + "_" + step).put("type", "function");
    call.putObject("function").put("name", TOOL).put("arguments", JSON.createObjectNode().put("code", code).toString());
    return completion(message, "tool_calls", analysis, step);
  }

  private ObjectNode completion(ObjectNode message, String finishReason, Analysis analysis, int step) {
    ObjectNode body = JSON.createObjectNode()
        .put("id", "chatcmpl-recorded-" + analyses.indexOf(analysis) + "-" + step)
        .put("object", "chat.completion")
        .put("created", System.currentTimeMillis() / 1000)
        .put("model", model);
    body.putArray("choices").addObject().put("index", 0).put("finish_reason", finishReason).set("message", message);
    // Nothing was generated: a recorded turn costs no tokens, and says so.
    body.putObject("usage").put("prompt_tokens", 0).put("completion_tokens", 0).put("total_tokens", 0);
    return body;
  }
}
