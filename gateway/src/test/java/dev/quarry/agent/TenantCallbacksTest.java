package dev.quarry.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.sandbox.CallbackFailure;
import dev.quarry.sandbox.Scope;
import io.vertx.core.Future;
import java.util.UUID;
import java.util.function.Function;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The failures the code sees from the one callbacks implementation, whichever path built it (an
 * execution's quota-checked llm or an analysis' model). Bad arguments are refused before search or
 * the model is reached, so neither is needed here; ExecutionsApiTest and the Analysis tests cover
 * the answers themselves.
 */
@DisplayName("A tenant's callbacks")
class TenantCallbacksTest {
  private static TenantCallbacks with(Function<String, Future<ModelClient.Completion>> model) {
    return new TenantCallbacks(UUID.randomUUID(), Scope.ALL, null, null, 100, 50, model);
  }

  private static CallbackFailure failure(Future<?> f) {
    assertThat(f.failed()).as("failed at once").isTrue();
    assertThat(f.cause()).isInstanceOf(CallbackFailure.class);
    return (CallbackFailure) f.cause();
  }

  @Test
  @DisplayName("refuses a blank or too long query and a limit out of bounds as ValueError naming the bound")
  void searchArguments() {
    TenantCallbacks callbacks = with(null);
    assertThat(failure(callbacks.search(" ", 5)).type()).isEqualTo("ValueError");
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
    assertThat(failure(with(p -> Future.failedFuture(new IllegalStateException("unreached"))).llm(""))
        .type()).isEqualTo("ValueError");
  }

  @Test
  @DisplayName("llm() failures reach the code typed: a quota's LimitExceeded as is, the model's by type, nothing internal")
  void llmFailures() {
    CallbackFailure quota = failure(with(p -> Future.failedFuture(
        new CallbackFailure("LimitExceeded", "model_tokens_per_day is spent"))).llm("hi"));
    assertThat(quota.type()).isEqualTo("LimitExceeded");
    assertThat(quota.message()).isEqualTo("model_tokens_per_day is spent");

    CallbackFailure model = failure(with(p -> Future.failedFuture(
        new ModelFailure("RateLimited", "429 from the endpoint"))).llm("hi"));
    assertThat(model.type()).isEqualTo("RuntimeError");
    assertThat(model.message()).isEqualTo("llm() failed: RateLimited: 429 from the endpoint");

    CallbackFailure internal = failure(with(p -> {
      throw new IllegalStateException("secret internal detail");
    }).llm("hi"));
    assertThat(internal.type()).isEqualTo("RuntimeError");
    assertThat(internal.message()).isEqualTo("llm() failed");
  }

  @Test
  @DisplayName("llm() answers with the model's text, and completion() keeps its usage for the budget")
  void llmAnswers() {
    TenantCallbacks callbacks = with(p -> Future.succeededFuture(new ModelClient.Completion("echo " + p,
        new Usage(3, 4))));
    assertThat(callbacks.llm("hi").result()).isEqualTo("echo hi");
    assertThat(callbacks.completion("hi").result().usage().total()).isEqualTo(7);
  }
}
