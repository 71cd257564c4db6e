package dev.quarry.agent;

import static dev.quarry.agent.ScriptedModelServer.answer;
import static dev.quarry.agent.ScriptedModelServer.execute;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.sandbox.SandboxCapacity;
import dev.quarry.sandbox.SandboxSettings;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * An analysis that waits for room in a full gateway (one sandbox at most, a wait as long as the
 * setting allows) and is cancelled meanwhile stops waiting at once, instead of when a sandbox frees
 * up or the wait runs out.
 */
@DisplayName("An analysis cancelled while it waits for a sandbox")
class AnalysisSandboxWaitTest {
  static AgentHarness h;

  @BeforeAll
  static void start() throws Exception {
    h = new AgentHarness(true, 1, SandboxSettings.MAX_WAIT_BOUND);
  }

  @AfterAll
  static void stop() throws Exception {
    h.close();
  }

  @Test
  @DisplayName("ends cancelled at once, never reaches the model, and the sandbox it waited for goes to nobody")
  void cancelledWhileWaiting() throws Exception {
    SandboxCapacity capacity = h.gateway.gateway().sandboxes().capacity();
    // The first analysis takes the only sandbox and keeps it while its model turn is held.
    ScriptedModelServer.Held held = new ScriptedModelServer.Held();
    h.model.then(held, answer("two", "print(2)"));
    Future<HttpResponse<Buffer>> first = h.gateway.client().post("/v1/analyses")
        .sendJsonObject(new JsonObject().put("question", "What is one plus one?").put("stream", false));
    held.asked().get(120, TimeUnit.SECONDS);
    assertThat(capacity.used()).isEqualTo(1);

    // The second starts, finds no room, and its client goes away: the analysis is cancelled.
    UUID waiting = h.postAndDisconnect(new JsonObject().put("question", "And two plus two?").put("stream", true),
        event -> "started".equals(event.getString("type")));
    JsonObject ended = h.awaitEnd(waiting);
    assertThat(ended.getString("status")).as(ended.encode()).isEqualTo("cancelled");
    // It ended while the only sandbox was still held by the first: it did not wait for it.
    assertThat(first.isComplete()).isFalse();
    assertThat(capacity.waiting()).isZero();
    assertThat(capacity.used()).isEqualTo(1);
    assertThat(h.model.requests()).as("the cancelled analysis never reached the model").hasSize(1);

    held.reply().complete(execute("print(2)"));
    HttpResponse<Buffer> answered = first.toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
    assertThat(answered.statusCode()).as(answered.bodyAsString()).isEqualTo(200);
    assertThat(answered.bodyAsJsonObject().getString("status")).isEqualTo("succeeded");
    h.assertNoSandboxes();
    assertThat(capacity.used()).isZero();
  }
}
