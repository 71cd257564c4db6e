package dev.quarry.agent;

import static dev.quarry.agent.ScriptedModelServer.execute;
import static dev.quarry.agent.ScriptedModelServer.quotaExceeded;
import static dev.quarry.agent.ScriptedModelServer.rateLimited;
import static dev.quarry.agent.ScriptedModelServer.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionMessageParam;
import com.openai.models.chat.completions.ChatCompletionUserMessageParam;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.net.Socket;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("The model client (real openai-java over HTTP against the scripted endpoint)")
class ModelClientTest {
  private static Vertx vertx;
  private ScriptedModelServer server;
  private ModelClient client;

  @BeforeAll
  static void startVertx() {
    vertx = Vertx.vertx();
  }

  @AfterAll
  static void stopVertx() {
    vertx.close().await();
  }

  @BeforeEach
  void start() {
    server = ScriptedModelServer.start(vertx);
    client = new ModelClient(settings(4, 10));
  }

  @AfterEach
  void stop() {
    client.close();
    server.close();
  }

  private AgentSettings settings(int attempts, int breakerThreshold) {
    return AgentSettings.fromEnv(Map.of())
        .withEndpoint(server.baseUrl(), "test-key", "scripted")
        .withRetries(attempts, Duration.ofMillis(20), Duration.ofMillis(200), breakerThreshold, Duration.ofMinutes(5));
  }

  private ChatCompletion chat(Duration budget) {
    List<ChatCompletionMessageParam> messages = List.of(ChatCompletionMessageParam.ofUser(
        ChatCompletionUserMessageParam.builder().content("question").build()));
    return client.chat(messages, List.of(ExecuteCodeTool.DEFINITION), Instant.now().plus(budget));
  }

  @Test
  @DisplayName("a tool call comes back with its code, and the request carries the execute_code schema")
  void toolCall() {
    server.then(execute("print(1)"));
    ChatCompletion reply = chat(Duration.ofSeconds(30));
    var call = reply.choices().get(0).message().toolCalls().orElseThrow().get(0).asFunction();
    assertThat(ExecuteCodeTool.code(call.function().name(), call.function().arguments())).isEqualTo("print(1)");
    var tool = server.requests().get(0).getJsonArray("tools").getJsonObject(0).getJsonObject("function");
    assertThat(tool.getString("name")).isEqualTo("execute_code");
    assertThat(tool.getJsonObject("parameters").getJsonArray("required").getList()).containsExactly("code");
    assertThat(server.requests().get(0).getString("model")).isEqualTo("scripted");
  }

  @Test
  @DisplayName("a conversation many TCP segments long reaches the endpoint whole, with the API key")
  void largeRequest() {
    server.then(execute("print(1)"));
    String question = "q".repeat(200_000);
    client.chat(List.of(ChatCompletionMessageParam.ofUser(ChatCompletionUserMessageParam.builder()
        .content(question).build())), List.of(ExecuteCodeTool.DEFINITION), Instant.now().plusSeconds(30));
    JsonObject request = server.requests().get(0);
    assertThat(request.getJsonArray("messages").getJsonObject(0).getString("content")).isEqualTo(question);
    assertThat(server.authorizations()).containsExactly("Bearer test-key");
  }

  @Test
  @DisplayName("the model's connections send at once (TCP_NODELAY): a request body over one segment"
      + " does not wait for the endpoint's delayed ACK")
  void noNagle() throws Exception {
    OkHttpClient http = ModelClient.httpClient(settings(4, 10));
    try (Socket socket = http.socketFactory().createSocket()) {
      assertThat(socket.getTcpNoDelay()).isTrue();
    }
    assertThat(http.followRedirects()).as("the API key is never sent on to another host").isFalse();
    assertThat(http.callTimeoutMillis()).isEqualTo(settings(4, 10).requestTimeout().toMillis());
  }

  @Test
  @DisplayName("a 429 with Retry-After is retried after the time it asks for, then succeeds")
  void retryAfter() {
    server.then(rateLimited("1"), execute("x = 1"));
    long start = System.nanoTime();
    ChatCompletion reply = chat(Duration.ofSeconds(30));
    long waitedMs = (System.nanoTime() - start) / 1_000_000;
    assertThat(reply.choices().get(0).message().toolCalls()).isPresent();
    assertThat(server.requests()).hasSize(2);
    assertThat(waitedMs).as("honours Retry-After: 1").isGreaterThanOrEqualTo(1000);
  }

  @Test
  @DisplayName("a Retry-After longer than the time left fails at once as RateLimited")
  void retryAfterPastDeadline() {
    server.then(rateLimited("120"), execute("x = 1"));
    assertThatThrownBy(() -> chat(Duration.ofSeconds(10)))
        .isInstanceOfSatisfying(ModelFailure.class, f -> assertThat(f.type()).isEqualTo("RateLimited"))
        .hasMessageContaining("time budget");
    assertThat(server.requests()).hasSize(1);
  }

  @Test
  @DisplayName("5xx responses are retried up to the attempt limit, then fail as ModelUnavailable")
  void serverErrorStorm() {
    client.close();
    client = new ModelClient(settings(4, 10));
    server.then(status(500), status(502), status(503), status(500), status(500));
    assertThatThrownBy(() -> chat(Duration.ofSeconds(30)))
        .isInstanceOfSatisfying(ModelFailure.class, f -> assertThat(f.type()).isEqualTo("ModelUnavailable"))
        .hasMessageContaining("4 attempts");
    assertThat(server.requests()).hasSize(4);
  }

  @Test
  @DisplayName("insufficient_quota and other 4xx are not retried")
  void notRetried() {
    server.then(quotaExceeded(), status(400), execute("never"));
    assertThatThrownBy(() -> chat(Duration.ofSeconds(30)))
        .isInstanceOfSatisfying(ModelFailure.class, f -> assertThat(f.type()).isEqualTo("QuotaExceeded"));
    assertThatThrownBy(() -> chat(Duration.ofSeconds(30)))
        .isInstanceOfSatisfying(ModelFailure.class, f -> assertThat(f.type()).isEqualTo("ModelRejected"))
        .hasMessageContaining("HTTP 400");
    assertThat(server.requests()).hasSize(2);
  }

  @Test
  @DisplayName("after consecutive failures the circuit breaker fails calls without sending them")
  void circuitBreaker() {
    client.close();
    client = new ModelClient(settings(2, 3));
    server.then(status(500), status(500), status(500), status(500), execute("x"));
    assertThatThrownBy(() -> chat(Duration.ofSeconds(30))).isInstanceOf(ModelFailure.class);
    assertThatThrownBy(() -> chat(Duration.ofSeconds(30)))
        .isInstanceOfSatisfying(ModelFailure.class, f -> assertThat(f.type()).isEqualTo("ModelUnavailable"))
        .hasMessageContaining("circuit breaker open");
    assertThat(server.requests()).as("the third attempt was never sent").hasSize(3);
    assertThat(client.breakerState()).isEqualTo(CircuitBreaker.State.OPEN);
  }

  @Test
  @DisplayName("calls cut by their callers' own short deadlines (the model still answering) are not endpoint"
      + " failures: the shared breaker stays closed and the next call is served (R6-3)")
  void callerDeadlinesDoNotOpenTheBreaker() {
    client.close();
    client = new ModelClient(settings(4, 3));
    for (int i = 0; i < 6; i++) {
      server.then(new ScriptedModelServer.Held());
    }
    server.then(execute("x"));
    for (int i = 0; i < 6; i++) {
      assertThatThrownBy(() -> chat(Duration.ofMillis(250)))
          .isInstanceOfSatisfying(ModelFailure.class, f -> assertThat(f.type()).isEqualTo("OutOfTime"));
    }
    assertThat(server.requests()).as("each held call was sent once, never retried past its deadline").hasSize(6);
    assertThat(client.breakerState()).isEqualTo(CircuitBreaker.State.CLOSED);

    ChatCompletion reply = chat(Duration.ofSeconds(30));

    assertThat(reply.choices().get(0).message().toolCalls()).isPresent();
  }

  @Test
  @DisplayName("a half-open trial cut by its caller's deadline leaves the breaker half-open (the next call is"
      + " the trial), while the endpoint's own timeout within a longer deadline still counts as a failure")
  void trialCutByItsCaller() {
    client.close();
    client = new ModelClient(AgentSettings.fromEnv(Map.of())
        .withEndpoint(server.baseUrl(), "test-key", "scripted")
        .withRetries(1, Duration.ofMillis(20), Duration.ofMillis(200), 1, Duration.ofMillis(500)));
    server.then(status(500), new ScriptedModelServer.Held(), execute("x"));
    assertThatThrownBy(() -> chat(Duration.ofSeconds(30)))
        .isInstanceOfSatisfying(ModelFailure.class, f -> assertThat(f.type()).isEqualTo("ModelUnavailable"));
    assertThat(client.breakerState()).isEqualTo(CircuitBreaker.State.OPEN);
    // Waits out the cool-down, goes as the trial, and is cut by its own deadline.
    assertThatThrownBy(() -> chat(Duration.ofMillis(1_000)))
        .isInstanceOfSatisfying(ModelFailure.class, f -> assertThat(f.type()).isEqualTo("OutOfTime"));
    assertThat(client.breakerState()).as("a trial cut by its caller neither closes nor re-opens it")
        .isEqualTo(CircuitBreaker.State.HALF_OPEN);
    assertThat(chat(Duration.ofSeconds(30)).choices().get(0).message().toolCalls()).isPresent();
    assertThat(client.breakerState()).isEqualTo(CircuitBreaker.State.CLOSED);

    // The endpoint's own request timeout (300 ms) with 30 s left on the caller's clock: a failure.
    try (ModelClient slow = new ModelClient(AgentSettings.fromEnv(Map.of("QUARRY_MODEL_TIMEOUT_MS", "300"))
        .withEndpoint(server.baseUrl(), "test-key", "scripted")
        .withRetries(1, Duration.ofMillis(20), Duration.ofMillis(200), 1, Duration.ofMinutes(5)))) {
      server.then(new ScriptedModelServer.Held());
      assertThatThrownBy(() -> slow.chat(List.of(ChatCompletionMessageParam.ofUser(
              ChatCompletionUserMessageParam.builder().content("question").build())), List.of(ExecuteCodeTool.DEFINITION),
          Instant.now().plusSeconds(30)))
          .isInstanceOfSatisfying(ModelFailure.class, f -> assertThat(f.type()).isEqualTo("ModelUnavailable"));
      assertThat(slow.breakerState()).isEqualTo(CircuitBreaker.State.OPEN);
    }
  }

  @Test
  @DisplayName("while the breaker is open a call with time to spare waits for the trial instead of failing,"
      + " and the endpoint sees only that trial")
  void breakerWaitsWithinBudget() {
    client.close();
    client = new ModelClient(AgentSettings.fromEnv(Map.of())
        .withEndpoint(server.baseUrl(), "test-key", "scripted")
        .withRetries(1, Duration.ofMillis(20), Duration.ofMillis(200), 1, Duration.ofSeconds(1)));
    server.then(status(500), execute("x"));
    assertThatThrownBy(() -> chat(Duration.ofSeconds(30)))
        .isInstanceOfSatisfying(ModelFailure.class, f -> assertThat(f.type()).isEqualTo("ModelUnavailable"));
    assertThat(client.breakerState()).isEqualTo(CircuitBreaker.State.OPEN);
    assertThatThrownBy(() -> chat(Duration.ofMillis(300)))
        .as("a budget that ends before the cool-down: fails at once, nothing sent")
        .isInstanceOfSatisfying(ModelFailure.class, f -> assertThat(f.type()).isEqualTo("ModelUnavailable"))
        .hasMessageContaining("circuit breaker open");
    assertThat(server.requests()).hasSize(1);

    ChatCompletion reply = chat(Duration.ofSeconds(30));

    assertThat(reply.choices().get(0).message().toolCalls()).isPresent();
    assertThat(server.requests()).as("the failed call, then the trial").hasSize(2);
    assertThat(client.breakerState()).isEqualTo(CircuitBreaker.State.CLOSED);
  }

  @Test
  @DisplayName("llm completions go out without tools and come back as text")
  void completion() {
    server.llm(prompt -> "echo: " + prompt);
    ModelClient.Completion c = client.complete("summarise this", Instant.now().plusSeconds(30));
    assertThat(c.text()).isEqualTo("echo: summarise this");
    assertThat(c.usage().total()).isEqualTo(120);
    assertThat(server.llmRequests()).hasSize(1);
  }

  @Test
  @DisplayName("as a sandbox's llm(): the text and both token counts come back; a refusal reaches the code"
      + " as a RuntimeError naming its type, and a call past its deadline is not sent")
  void asLlm() throws Exception {
    server.llm(prompt -> "echo: " + prompt);
    dev.quarry.callbacks.Llm llm = client.asLlm();
    dev.quarry.callbacks.Llm.Reply reply = llm.complete("hello", Instant.now().plusSeconds(30))
        .await(30, java.util.concurrent.TimeUnit.SECONDS);
    assertThat(reply.text()).isEqualTo("echo: hello");
    assertThat(reply.total()).isEqualTo(120);
    assertThat(reply.promptTokens()).isPositive();

    // An endpoint that refuses connections: the failure is typed, worded for the code.
    java.net.ServerSocket closed = new java.net.ServerSocket(0);
    int port = closed.getLocalPort();
    closed.close();
    try (ModelClient down = new ModelClient(AgentSettings.fromEnv(Map.of())
        .withEndpoint("http://127.0.0.1:" + port + "/v1", "k", "scripted")
        .withRetries(1, Duration.ofMillis(1), Duration.ofMillis(1), 10, Duration.ofMinutes(1)))) {
      assertThatThrownBy(() -> down.asLlm().complete("again", Instant.now().plusSeconds(30))
          .await(30, java.util.concurrent.TimeUnit.SECONDS))
          .isInstanceOfSatisfying(dev.quarry.sandbox.CallbackFailure.class, f -> {
            assertThat(f.type()).isEqualTo("RuntimeError");
            assertThat(f.message()).startsWith("llm() failed: ModelUnavailable: ");
          });
    }
    int sent = server.llmRequests().size();
    assertThatThrownBy(() -> llm.complete("late", Instant.now().minusSeconds(1))
        .await(30, java.util.concurrent.TimeUnit.SECONDS))
        .isInstanceOfSatisfying(dev.quarry.sandbox.CallbackFailure.class,
            f -> assertThat(f.message()).startsWith("llm() failed: OutOfTime"));
    assertThat(server.llmRequests()).as("nothing sent past the deadline").hasSize(sent);
  }

  @Test
  @DisplayName("without an endpoint, calls fail with a message that says how to configure one")
  void notConfigured() {
    try (ModelClient none = new ModelClient(AgentSettings.fromEnv(Map.of()))) {
      assertThat(none.configured()).isFalse();
      assertThatThrownBy(() -> none.complete("x", Instant.now().plusSeconds(5)))
          .hasMessageContaining("OPENAI_BASE_URL");
    }
  }
}
