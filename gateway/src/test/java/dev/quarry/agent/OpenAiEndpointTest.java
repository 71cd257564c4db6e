package dev.quarry.agent;

import static dev.quarry.agent.ScriptedModelServer.answer;
import static dev.quarry.agent.ScriptedModelServer.execute;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.errors.BadRequestException;
import com.openai.errors.NotFoundException;
import com.openai.errors.OpenAIServiceException;
import com.openai.errors.UnauthorizedException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionContentPart;
import com.openai.models.chat.completions.ChatCompletionContentPartImage;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionFunctionTool;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.FunctionDefinition;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Quarry as an OpenAI-compatible model, called by the official openai-java client over real HTTP:
 * the real gateway, real sandboxes, and the scripted model behind the agent.
 */
@DisplayName("POST /v1/chat/completions and GET /v1/models, called by openai-java")
class OpenAiEndpointTest {
  static AgentHarness h;
  static OpenAIClient client;

  @BeforeAll
  static void start() throws Exception {
    h = new AgentHarness(false);
    h.ingest("docling/html/wiki_duck.html");
    client = OpenAIOkHttpClient.builder().baseUrl(h.gateway.url() + "/v1").apiKey(h.gateway.apiKey())
        .maxRetries(0).timeout(Duration.ofMinutes(2)).build();
  }

  @AfterAll
  static void stop() throws Exception {
    client.close();
    h.close();
  }

  @AfterEach
  void nothingLeft() throws Exception {
    h.model.reset();
    h.assertNoSandboxes();
  }

  private static ChatCompletionCreateParams.Builder ask(String question) {
    return ChatCompletionCreateParams.builder().model("quarry").addUserMessage(question);
  }

  @Test
  @DisplayName("a completion is an analysis: its answer is the content; program, citations and id ride along")
  void completion() {
    h.model.then(execute("hits = await search('duck')\nprint(hits[0]['document_title'])"),
        answer("Ducks are waterbirds [wiki_duck].", "hits = await search('duck')\nprint(hits[0]['document_title'])"));
    ChatCompletion completion = client.chat().completions().create(ChatCompletionCreateParams.builder()
        .model("quarry").addSystemMessage("Answer in one sentence.").addUserMessage("What is a duck?").build());

    assertThat(completion.choices()).hasSize(1);
    assertThat(completion.choices().get(0).message().content()).hasValue("Ducks are waterbirds [wiki_duck].");
    assertThat(completion.choices().get(0).finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.STOP);
    assertThat(completion.model()).isEqualTo("quarry");
    assertThat(completion.usage().get().totalTokens()).isEqualTo(240); // two scripted turns of 120
    JsonObject quarry = extra(completion._additionalProperties(), "quarry");
    String id = quarry.getString("analysis_id");
    assertThat(completion.id()).isEqualTo("chatcmpl-" + id.replace("-", ""));
    assertThat(quarry.getString("program")).contains("await search('duck')");
    assertThat(quarry.getJsonArray("citations")).isNotEmpty();
    assertThat(quarry.getJsonObject("usage").getInteger("execute_code_calls")).isEqualTo(1);

    // The same analysis as the REST API shows it: stored, with the last user message as its question.
    JsonObject analysis = h.get("/v1/analyses/" + id).bodyAsJsonObject();
    assertThat(analysis.getString("status")).isEqualTo("succeeded");
    assertThat(analysis.getString("question")).isEqualTo("What is a duck?");
    assertThat(analysis.getString("answer")).isEqualTo("Ducks are waterbirds [wiki_duck].");
    // The caller's system message reached the model after Quarry's own prompt, which still comes first.
    JsonArray sent = h.model.requests().get(0).getJsonArray("messages");
    assertThat(sent.getJsonObject(0).getString("content")).isEqualTo(SystemPrompt.TEXT);
    assertThat(sent.getJsonObject(1).getString("role")).isEqualTo("system");
    assertThat(sent.getJsonObject(1).getString("content")).endsWith("Answer in one sentence.");
    // And it replays like any other.
    JsonObject replay = h.post("/v1/analyses/" + id + "/replay", new JsonObject()).bodyAsJsonObject();
    assertThat(replay.getJsonObject("replay").getString("stdout")).isEqualTo(
        analysis.getJsonArray("steps").getJsonObject(0).getJsonObject("result").getString("stdout"));
  }

  @Test
  @DisplayName("a follow-up carries the earlier turns to the model as context, and into the record")
  void followUp() {
    h.model.then(execute("print(1)"), answer("In 2019 it was 4.", "print(1)"));
    ChatCompletion completion = client.chat().completions().create(ask("What was the count in 2020?")
        .addAssistantMessage("In 2020 it was 5.").addUserMessage("and the year before?").build());
    assertThat(completion.choices().get(0).message().content()).hasValue("In 2019 it was 4.");

    String first = h.model.requests().get(0).getJsonArray("messages").getJsonObject(1).getString("content");
    assertThat(first).startsWith(Conversation.EARLIER_TURNS)
        .contains("[user] What was the count in 2020?\n[assistant] In 2020 it was 5.\n")
        .endsWith("Question: and the year before?");
    String id = extra(completion._additionalProperties(), "quarry").getString("analysis_id");
    assertThat(h.get("/v1/analyses/" + id).bodyAsJsonObject().getString("question")).isEqualTo("and the year before?");
    JsonObject started = AgentHarness.events(h.get("/v1/analyses/" + id + "/events").bodyAsString()).get(0);
    assertThat(started.getJsonArray("conversation")).containsExactly(
        new JsonObject().put("role", "user").put("text", "What was the count in 2020?"),
        new JsonObject().put("role", "assistant").put("text", "In 2020 it was 5."));
  }

  @Test
  @DisplayName("a conversation whose last assistant turn is an analysis' answer goes on from that analysis: its"
      + " code finds the earlier variables, its turns are not asked again")
  void continuesTheAnalysisItsAnswerCameFrom() {
    String said = "The total is 42 (" + java.util.UUID.randomUUID() + ").";
    h.model.then(execute("total = 40 + 2\nprint(total)"), answer(said, "total = 40 + 2\nprint(total)"));
    ChatCompletion first = client.chat().completions().create(ask("What is the total?").build());
    String firstId = extra(first._additionalProperties(), "quarry").getString("analysis_id");
    h.model.then(execute("print(total + 1)"), answer("One more is 43.", "print(42 + 1)"));
    ChatCompletion next = client.chat().completions().create(ask("What is the total?")
        .addAssistantMessage(said).addUserMessage("And one more?").build());
    assertThat(next.choices().get(0).message().content()).hasValue("One more is 43.");
    String id = extra(next._additionalProperties(), "quarry").getString("analysis_id");
    JsonObject analysis = h.get("/v1/analyses/" + id).bodyAsJsonObject();
    assertThat(analysis.getString("follows")).isEqualTo(firstId);
    assertThat(analysis.getString("question")).isEqualTo("And one more?");
    assertThat(analysis.getJsonArray("steps").getJsonObject(0).getJsonObject("result").getString("stdout"))
        .isEqualTo("43\n");
    assertThat(h.model.requests()).as("two turns each; the first analysis' not asked again").hasSize(4);
  }

  @Test
  @DisplayName("streamed: progress as reasoning_content as it happens, then the answer, usage, and [DONE]")
  void streaming() {
    h.model.then(execute("print('cell says hi')"), answer("The answer.", "print('cell says hi')"));
    List<String> reasoning = new ArrayList<>();
    StringBuilder content = new StringBuilder();
    List<ChatCompletionChunk> chunks = new ArrayList<>();
    try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(ask("Stream it?")
        .streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build()).build())) {
      stream.stream().forEach(chunk -> {
        chunks.add(chunk);
        for (ChatCompletionChunk.Choice choice : chunk.choices()) {
          choice.delta().content().ifPresent(content::append);
          JsonValue r = choice.delta()._additionalProperties().get("reasoning_content");
          if (r != null) {
            reasoning.add(r.asStringOrThrow());
          }
        }
      });
    }
    String thought = String.join("", reasoning);
    assertThat(thought).contains("```python\nprint('cell says hi')\n```").contains("cell says hi\n");
    assertThat(thought.indexOf("```python")).isLessThan(thought.lastIndexOf("cell says hi\n"));
    assertThat(content.toString()).isEqualTo("The answer.");
    assertThat(chunks.get(0).choices().get(0).delta().role()).isPresent();
    ChatCompletionChunk usage = chunks.getLast();
    assertThat(usage.choices()).isEmpty();
    assertThat(usage.usage().get().totalTokens()).isEqualTo(240);
    ChatCompletionChunk last = chunks.get(chunks.size() - 2);
    assertThat(last.choices().get(0).finishReason()).hasValue(ChatCompletionChunk.Choice.FinishReason.STOP);
    JsonObject quarry = extra(last._additionalProperties(), "quarry");
    assertThat(quarry.getString("program")).isEqualTo("print('cell says hi')");
    assertThat(chunks).allSatisfy(c -> assertThat(c.id()).isEqualTo(chunks.get(0).id()));
    // Without include_usage no chunk carries usage.
    h.model.then(execute("print(2)"), answer("Two.", "print(2)"));
    try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(ask("Again?").build())) {
      assertThat(stream.stream().toList()).allSatisfy(c -> assertThat(c.usage()).isEmpty());
    }
  }

  @Test
  @DisplayName("what the endpoint cannot honour is refused in OpenAI's error shape, naming it")
  void refusals() throws Exception {
    assertThatThrownBy(() -> client.chat().completions().create(ask("Q?").n(2).build()))
        .isInstanceOf(BadRequestException.class).hasMessageContaining("n=1");
    assertThatThrownBy(() -> client.chat().completions().create(ask("Q?").addTool(ChatCompletionFunctionTool.builder()
        .function(FunctionDefinition.builder().name("mine").build()).build()).build()))
        .isInstanceOf(BadRequestException.class).hasMessageContaining("tools of the caller's own");
    assertThatThrownBy(() -> client.chat().completions().create(ask("Q?").logprobs(true).build()))
        .isInstanceOf(BadRequestException.class).hasMessageContaining("logprobs");
    assertThatThrownBy(() -> client.chat().completions().create(ChatCompletionCreateParams.builder().model("quarry")
        .addUserMessageOfArrayOfContentParts(List.of(ChatCompletionContentPart.ofImageUrl(
            ChatCompletionContentPartImage.builder().imageUrl(ChatCompletionContentPartImage.ImageUrl.builder()
                .url("https://example.invalid/a.png").build()).build()))).build()))
        .isInstanceOf(BadRequestException.class).hasMessageContaining("'image_url'");
    assertThatThrownBy(() -> client.chat().completions().create(ask("Q?").model("gpt-4o").build()))
        .isInstanceOf(NotFoundException.class).hasMessageContaining("'gpt-4o'");
    OpenAIClient stranger = OpenAIOkHttpClient.builder().baseUrl(h.gateway.url() + "/v1").apiKey("qk_nope")
        .maxRetries(0).build();
    try {
      assertThatThrownBy(() -> stranger.chat().completions().create(ask("Q?").build()))
          .isInstanceOf(UnauthorizedException.class);
      assertThatThrownBy(() -> stranger.models().list()).isInstanceOf(UnauthorizedException.class);
    } finally {
      stranger.close();
    }

    // The raw shapes, for clients other than openai-java.
    JsonObject n = raw(new JsonObject().put("model", "quarry").put("n", 3)
        .put("messages", new JsonArray().add(new JsonObject().put("role", "user").put("content", "Q?"))), 400);
    assertThat(n.getJsonObject("error").fieldNames()).containsExactlyInAnyOrder("message", "type", "param", "code");
    assertThat(n.getJsonObject("error").getString("type")).isEqualTo("invalid_request_error");
    assertThat(n.getJsonObject("error").getString("param")).isEqualTo("n");
    for (JsonObject bad : List.of(
        new JsonObject().put("model", "quarry"),
        new JsonObject().put("model", "quarry").put("messages", new JsonArray()),
        new JsonObject().put("model", "quarry").put("messages", new JsonArray().add("hello")),
        new JsonObject().put("model", "quarry").put("messages",
            new JsonArray().add(new JsonObject().put("role", "assistant").put("content", "last"))),
        new JsonObject().put("model", "quarry").put("messages",
            new JsonArray().add(new JsonObject().put("role", "tool").put("content", "x").put("tool_call_id", "1"))),
        new JsonObject().put("model", "quarry").put("messages",
            new JsonArray().add(new JsonObject().put("role", "user").put("content", "  "))),
        new JsonObject().put("model", "quarry").put("frobnicate", 1).put("messages",
            new JsonArray().add(new JsonObject().put("role", "user").put("content", "Q?"))),
        new JsonObject().put("model", "quarry").put("stream_options", new JsonObject().put("include_usage", true))
            .put("messages", new JsonArray().add(new JsonObject().put("role", "user").put("content", "Q?"))))) {
      JsonObject error = raw(bad, 400).getJsonObject("error");
      assertThat(error.getString("type")).as(bad.encode()).isEqualTo("invalid_request_error");
      assertThat(error.getString("message")).as(bad.encode()).isNotBlank();
    }
    assertThat(h.model.requests()).as("nothing refused reached the model").isEmpty();
  }

  @Test
  @DisplayName("GET /v1/models lists quarry; sampling options are accepted and change nothing")
  void models() {
    assertThat(client.models().list().data()).extracting(m -> m.id()).containsExactly("quarry");
    assertThat(client.models().retrieve("quarry").ownedBy()).isEqualTo("quarry");
    assertThatThrownBy(() -> client.models().retrieve("gpt-4o")).isInstanceOf(NotFoundException.class);
    h.model.then(execute("print(1)"), answer("One.", "print(1)"));
    ChatCompletion c = client.chat().completions().create(ask("Q?").temperature(0.7).topP(0.9).maxCompletionTokens(50)
        .seed(3).user("someone").build());
    assertThat(c.choices().get(0).message().content()).hasValue("One.");
  }

  @Test
  @DisplayName("an analysis that ends without an answer is an error naming it, never an empty answer")
  void failedAnalysis() throws Exception {
    h.model.then(ScriptedModelServer.status(400));
    assertThatThrownBy(() -> client.chat().completions().create(ask("Fail?").build()))
        .isInstanceOfSatisfying(OpenAIServiceException.class, e -> assertThat(e.statusCode()).isEqualTo(502))
        .hasMessageContaining("ModelRejected");
    // Streamed: the stream carries OpenAI's error event, then ends.
    h.model.then(ScriptedModelServer.status(400));
    String sse = rawStream(new JsonObject().put("model", "quarry").put("stream", true)
        .put("messages", new JsonArray().add(new JsonObject().put("role", "user").put("content", "Fail?"))));
    assertThat(sse).contains("\"error\":{").contains("ModelRejected").endsWith("data: [DONE]\n\n");
  }

  @Test
  @DisplayName("a streaming client that goes away cancels its analysis")
  void disconnectCancels() throws Exception {
    h.model.then(execute("n = 0\nwhile True:\n    n = n + 1"), answer("never", "print(1)"));
    byte[] payload = new JsonObject().put("model", "quarry").put("stream", true)
        .put("messages", new JsonArray().add(new JsonObject().put("role", "user").put("content", "Forever?")))
        .encode().getBytes(StandardCharsets.UTF_8);
    UUID id = null;
    try (Socket socket = new Socket("localhost", h.gateway.port())) {
      socket.setSoTimeout(120_000);
      OutputStream out = socket.getOutputStream();
      out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer "
          + h.gateway.apiKey() + "\r\nContent-Type: application/json\r\nContent-Length: " + payload.length
          + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      out.write(payload);
      out.flush();
      BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        if (line.regionMatches(true, 0, "X-Analysis-Id:", 0, 14)) {
          id = UUID.fromString(line.substring(14).trim());
        }
        if (line.contains("```python")) {
          break;
        }
      }
    }
    assertThat(id).isNotNull();
    JsonObject analysis = h.awaitEnd(id);
    assertThat(analysis.getString("status")).isEqualTo("cancelled");
  }

  private static JsonObject extra(Map<String, JsonValue> properties, String key) {
    JsonValue value = properties.get(key);
    assertThat(value).as("extra field " + key).isNotNull();
    return new JsonObject(value.convert(Map.class) instanceof Map<?, ?> m ? castMap(m) : Map.of());
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> castMap(Map<?, ?> m) {
    return (Map<String, Object>) m;
  }

  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private static JsonObject raw(JsonObject body, int status) throws Exception {
    var response = HTTP.send(HttpRequest.newBuilder(URI.create(h.gateway.url() + "/v1/chat/completions"))
        .header("Authorization", "Bearer " + h.gateway.apiKey()).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body.encode())).build(), BodyHandlers.ofString());
    assertThat(response.statusCode()).as(body.encode() + " -> " + response.body()).isEqualTo(status);
    return new JsonObject(response.body());
  }

  private static String rawStream(JsonObject body) throws Exception {
    var response = HTTP.send(HttpRequest.newBuilder(URI.create(h.gateway.url() + "/v1/chat/completions"))
        .header("Authorization", "Bearer " + h.gateway.apiKey()).header("Content-Type", "application/json")
        .timeout(Duration.ofMinutes(2)).POST(HttpRequest.BodyPublishers.ofString(body.encode())).build(),
        BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);
    return response.body();
  }
}
