package dev.quarry.callbacks;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.config.Quota;
import dev.quarry.sandbox.CallbackFailure;
import dev.quarry.sandbox.Scope;
import dev.quarry.search.QueryRules;
import dev.quarry.tenancy.QuotaExceeded;
import io.vertx.core.Future;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The failures the code sees from the one callbacks implementation, whichever path built it. Bad
 * arguments are refused before search or the model is reached, so neither is needed here;
 * AnalysisQuotaTest covers the daily token account on every path against a real database, and
 * ExecutionsApiTest and the analysis tests the answers themselves.
 */
@DisplayName("A tenant's callbacks")
class TenantCallbacksTest {
  private static final QueryRules RULES = new QueryRules(100, 50);

  private static TenantCallbacks with(Llm llm) {
    return new TenantCallbacks(UUID.randomUUID(), Scope.ALL, null, null, RULES, llm, TokenAccount.unmetered(),
        CallbackTurns.unmetered(), () -> Instant.MAX);
  }

  private static CallbackFailure failure(Future<?> f) {
    assertThat(f.failed()).as("failed at once").isTrue();
    assertThat(f.cause()).isInstanceOf(CallbackFailure.class);
    return (CallbackFailure) f.cause();
  }

  @Test
  @DisplayName("refuses a blank, NUL-bearing or too long query and a limit out of bounds as ValueError, in the rules' words")
  void searchArguments() {
    TenantCallbacks callbacks = with(null);
    CallbackFailure blank = failure(callbacks.search(" ", 5));
    assertThat(blank.type()).isEqualTo("ValueError");
    assertThat(blank.message()).isEqualTo("search(): " + RULES.check(" ", 5).orElseThrow().message());
    assertThat(failure(callbacks.search("a\0b", 5)).message()).contains("NUL");
    CallbackFailure tooLong = failure(callbacks.search("x".repeat(51), 5));
    assertThat(tooLong.type()).isEqualTo("ValueError");
    assertThat(tooLong.message()).contains("51 characters").contains("50");
    CallbackFailure limit = failure(callbacks.search("oil", 101));
    assertThat(limit.type()).isEqualTo("ValueError");
    assertThat(limit.message()).contains("between 1 and 100").contains("101");
    assertThat(failure(callbacks.search("oil", 0)).type()).isEqualTo("ValueError");
  }

  @Test
  @DisplayName("llm() without a model says how it is unavailable; a blank prompt is a ValueError")
  void llmUnavailable() {
    assertThat(failure(with(null).llm("hello")).message()).contains("no model endpoint is configured");
    assertThat(failure(with((p, d) -> Future.failedFuture(new IllegalStateException("unreached"))).llm(""))
        .type()).isEqualTo("ValueError");
  }

  @Test
  @DisplayName("llm() failures reach the code typed: a spent quota as LimitExceeded, the model's as worded, nothing internal")
  void llmFailures() {
    CallbackFailure quota = failure(with((p, d) -> Future.failedFuture(
        new QuotaExceeded(Quota.MODEL_TOKENS_PER_DAY, 10, 3600, "spent"))).llm("hi"));
    assertThat(quota.type()).isEqualTo("LimitExceeded");

    CallbackFailure model = failure(with((p, d) -> Future.failedFuture(
        CallbackFailure.runtimeError("llm() failed: RateLimited: 429 from the endpoint"))).llm("hi"));
    assertThat(model.type()).isEqualTo("RuntimeError");
    assertThat(model.message()).isEqualTo("llm() failed: RateLimited: 429 from the endpoint");

    CallbackFailure internal = failure(with((p, d) -> {
      throw new IllegalStateException("secret internal detail");
    }).llm("hi"));
    assertThat(internal.type()).isEqualTo("RuntimeError");
    assertThat(internal.message()).isEqualTo("llm() failed");
  }

  @Test
  @DisplayName("llm() answers with the model's text by the work's deadline, and completion() keeps its tokens for the budget")
  void llmAnswers() {
    Instant deadline = Instant.parse("2030-01-01T00:00:00Z");
    List<Instant> asked = new ArrayList<>();
    TenantCallbacks callbacks = new TenantCallbacks(UUID.randomUUID(), Scope.ALL, null, null, RULES,
        (p, d) -> {
          asked.add(d);
          return Future.succeededFuture(new Llm.Reply("echo " + p, 3, 4));
        }, TokenAccount.unmetered(), CallbackTurns.unmetered(), () -> deadline);
    assertThat(callbacks.llm("hi").result()).isEqualTo("echo hi");
    assertThat(callbacks.completion("hi").result().total()).isEqualTo(7);
    assertThat(asked).containsOnly(deadline);
  }
}
