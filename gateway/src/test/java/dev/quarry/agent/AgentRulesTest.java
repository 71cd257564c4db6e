package dev.quarry.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("The agent's rules: final answers, budgets, the circuit breaker, settings")
class AgentRulesTest {

  @Test
  @DisplayName("a final message is {answer, program} and nothing else; a code fence around it is tolerated")
  void finalAnswer() {
    assertThat(FinalAnswer.parse("{\"answer\": \"42\", \"program\": \"print(42)\"}"))
        .isEqualTo(new FinalAnswer("42", "print(42)"));
    assertThat(FinalAnswer.parse("```json\n{\"answer\": \"a\", \"program\": \"p\"}\n```").answer()).isEqualTo("a");
    assertThatThrownBy(() -> FinalAnswer.parse("The answer is 42")).hasMessageContaining("not a JSON object");
    assertThatThrownBy(() -> FinalAnswer.parse("Sure! {\"answer\": \"a\", \"program\": \"p\"}"))
        .hasMessageContaining("not a JSON object");
    assertThatThrownBy(() -> FinalAnswer.parse("{\"answer\": \"a\"}")).hasMessageContaining("\"program\"");
    assertThatThrownBy(() -> FinalAnswer.parse("{\"answer\": 42, \"program\": \"p\"}")).hasMessageContaining("\"answer\"");
    assertThatThrownBy(() -> FinalAnswer.parse("[1]")).hasMessageContaining("not a JSON object");
    assertThatThrownBy(() -> FinalAnswer.parse("  ")).hasMessageContaining("empty");
  }

  @Test
  @DisplayName("a request's budgets override the defaults within the maximums, naming a bad field")
  void budgets() {
    Budgets b = Budgets.DEFAULTS.overriddenBy(new JsonObject().put("model_turns", 5).put("llm_calls", 1),
        Budgets.MAXIMUMS);
    assertThat(b.modelTurns()).isEqualTo(5);
    assertThat(b.llmCalls()).isEqualTo(1);
    assertThat(b.executions()).isEqualTo(Budgets.DEFAULTS.executions());
    assertThat(Budgets.fromJson(b.toJson())).isEqualTo(b);
    assertThatThrownBy(() -> Budgets.DEFAULTS.overriddenBy(new JsonObject().put("tokens", 0), Budgets.MAXIMUMS))
        .hasMessageContaining("budgets.tokens");
    assertThatThrownBy(() -> Budgets.DEFAULTS.overriddenBy(new JsonObject().put("search_calls", "many"),
        Budgets.MAXIMUMS)).hasMessageContaining("budgets.search_calls must be an integer");
    assertThatThrownBy(() -> Budgets.DEFAULTS.overriddenBy(new JsonObject().put("wall_time_ms", 1L << 40),
        Budgets.MAXIMUMS)).hasMessageContaining("between 1 and " + Budgets.MAXIMUMS.wallTimeMs());
  }

  /** A clock the test moves by hand. */
  private static final class ManualClock extends Clock {
    Instant now = Instant.parse("2026-01-01T00:00:00Z");

    @Override
    public java.time.ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return now;
    }
  }

  @Test
  @DisplayName("the breaker opens after the threshold, lets one trial through after the cool-down, and closes on success")
  void circuitBreaker() {
    ManualClock clock = new ManualClock();
    CircuitBreaker breaker = new CircuitBreaker(2, Duration.ofSeconds(30), clock);
    breaker.acquire().failed();
    breaker.acquire().failed();
    assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);
    assertThatThrownBy(breaker::acquire).isInstanceOf(ModelFailure.class).hasMessageContaining("circuit breaker open");
    clock.now = clock.now.plusSeconds(31);
    assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.HALF_OPEN);
    CircuitBreaker.Permit trial = breaker.acquire();
    assertThatThrownBy(breaker::acquire).as("one trial at a time").isInstanceOf(ModelFailure.class);
    trial.failed();
    assertThat(breaker.state()).as("a failed trial re-opens it").isEqualTo(CircuitBreaker.State.OPEN);
    clock.now = clock.now.plusSeconds(31);
    breaker.acquire().succeeded();
    assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.CLOSED);
    breaker.acquire();
  }

  @Test
  @DisplayName("a call released as neutral (cut by its caller) neither counts as a failure nor frees another's"
      + " half-open trial; a released trial lets the next call be the trial; a permit reports once")
  void circuitBreakerNeutralRelease() {
    ManualClock clock = new ManualClock();
    CircuitBreaker breaker = new CircuitBreaker(2, Duration.ofSeconds(30), clock);
    for (int i = 0; i < 5; i++) {
      breaker.acquire().released();
    }
    assertThat(breaker.state()).as("released calls are not failures").isEqualTo(CircuitBreaker.State.CLOSED);
    CircuitBreaker.Permit early = breaker.acquire(); // let through while closed, still running
    CircuitBreaker.Permit failing = breaker.acquire();
    failing.failed();
    failing.failed();
    assertThat(breaker.state()).as("a permit counts once").isEqualTo(CircuitBreaker.State.CLOSED);
    breaker.acquire().failed();
    assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);
    clock.now = clock.now.plusSeconds(31);
    CircuitBreaker.Permit trial = breaker.acquire();
    early.released();
    assertThatThrownBy(breaker::acquire).as("an older call's release does not free the trial")
        .isInstanceOf(ModelFailure.class);
    trial.released();
    assertThat(breaker.state()).as("a released trial leaves it half-open").isEqualTo(CircuitBreaker.State.HALF_OPEN);
    breaker.acquire().succeeded();
    assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.CLOSED);
  }

  @Test
  @DisplayName("settings come from the environment, QUARRY_ names before OPENAI_ ones; a bad value names its variable")
  void settings() {
    AgentSettings s = AgentSettings.fromEnv(Map.of("OPENAI_BASE_URL", "http://a/v1", "QUARRY_MODEL_BASE_URL",
        "http://b/v1", "OPENAI_API_KEY", "k", "QUARRY_MODEL", "m", "QUARRY_ANALYSIS_ON_DISCONNECT", "cancel"));
    assertThat(s.baseUrl()).isEqualTo("http://b/v1");
    assertThat(s.apiKey()).isEqualTo("k");
    assertThat(s.model()).isEqualTo("m");
    assertThat(s.cancelOnDisconnect()).isTrue();
    assertThat(AgentSettings.fromEnv(Map.of()).modelConfigured()).isFalse();
    assertThatThrownBy(() -> AgentSettings.fromEnv(Map.of("QUARRY_MODEL_TEMPERATURE", "3")))
        .hasMessageContaining("QUARRY_MODEL_TEMPERATURE");
    assertThatThrownBy(() -> AgentSettings.fromEnv(Map.of("QUARRY_EXECUTIONS", "500")))
        .hasMessageContaining("QUARRY_EXECUTIONS");
    assertThatThrownBy(() -> AgentSettings.fromEnv(Map.of("QUARRY_ANALYSIS_ON_DISCONNECT", "shrug")))
        .hasMessageContaining("finish, cancel");
  }

  @Test
  @DisplayName("back-off doubles from the base up to the cap; Retry-After is read in seconds, milliseconds or as a date")
  void backoffAndRetryAfter() {
    ManualClock clock = new ManualClock();
    ModelClient client = new ModelClient(AgentSettings.fromEnv(Map.of()).withRetries(5, Duration.ofMillis(100),
        Duration.ofMillis(1000), 3, Duration.ofSeconds(1)), clock);
    assertThat(client.backoff(1)).isEqualTo(Duration.ofMillis(100));
    assertThat(client.backoff(3)).isEqualTo(Duration.ofMillis(400));
    assertThat(client.backoff(10)).isEqualTo(Duration.ofMillis(1000));
    assertThat(client.retryAfter(headers("retry-after", "2"))).contains(Duration.ofSeconds(2));
    assertThat(client.retryAfter(headers("retry-after-ms", "250"))).contains(Duration.ofMillis(250));
    assertThat(client.retryAfter(headers("retry-after", "Thu, 01 Jan 2026 00:00:05 GMT"))).contains(Duration.ofSeconds(5));
    assertThat(client.retryAfter(headers("retry-after", "soon"))).isEmpty();
  }

  private static com.openai.core.http.Headers headers(String name, String value) {
    return com.openai.core.http.Headers.builder().put(name, value).build();
  }
}
