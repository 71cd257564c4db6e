package dev.quarry.sandbox;

import static dev.quarry.sandbox.SessionFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the session does with callbacks a runner taken over by the sandbox's code sends (red team
 * round 5, R5-1 and R5-4), on the real engine with {@link HostileRunner}'s image.
 */
@DisplayName("Callback guards: calls outside their cell, and handlers that throw Errors")
class CallbackGuardsTest {
  @TempDir Path tmp;

  /** Search answers with one hit and counts its calls; list_documents and llm are not used. */
  static final class Counting implements Callbacks {
    final AtomicInteger searches = new AtomicInteger();
    volatile boolean throwError;

    @Override
    public Future<JsonArray> search(String query, int limit) {
      searches.incrementAndGet();
      if (throwError) {
        // What an OutOfMemoryError while parsing a huge argument looked like to the session.
        throw new OutOfMemoryError("a stand-in for the heap running out inside a callback");
      }
      return Future.succeededFuture(new JsonArray().add(new io.vertx.core.json.JsonObject().put("chunk_id", "c1")));
    }

    @Override
    public Future<JsonArray> listDocuments() {
      return Future.succeededFuture(new JsonArray());
    }

    @Override
    public Future<String> llm(String prompt) {
      return Future.failedFuture(CallbackFailure.runtimeError("no model here"));
    }
  }

  static CellOptions wall(long ms) {
    return new CellOptions(ms, 10_000, List.of());
  }

  @Test
  @DisplayName("a callback that names another cell than the running one is refused unserved, and ends the sandbox as a protocol error")
  void callbackOutsideItsCellIsRefused() throws Exception {
    try (SessionFixture sf = new SessionFixture(tmp, HostileRunner.ensure(), 4, Duration.ofSeconds(30),
        SandboxSettings.Fairness.DEFAULTS.withTenantSharePercent(100))) {
      Counting callbacks = new Counting();
      SandboxSession s = await(sf.service.open(sf.fx.tenantA, Scope.ALL, callbacks));
      try {
        CellOutcome outcome = await(s.execute("#orphan -", wall(20_000), CellListener.NONE));
        assertThat(callbacks.searches.get()).as("searches served").isZero();
        assertThat(outcome.success()).as(outcome.toString()).isFalse();
        assertThat(outcome.error().type()).isEqualTo(CellError.SANDBOX_CRASHED);
        assertThat(outcome.error().message()).contains("protocol error").contains("outside its cell");
        CellOutcome next = await(s.execute("#search ferry", wall(20_000), CellListener.NONE));
        assertThat(next.error().type()).as(next.toString()).isEqualTo(CellError.SANDBOX_UNAVAILABLE);
        assertThat(callbacks.searches.get()).as("searches served").isZero();
      } finally {
        await(s.close());
      }
      sf.assertClean();
    }
  }

  @Test
  @DisplayName("an Error thrown inside a callback reaches the code as a RuntimeError and gives its in-flight places back")
  void errorInsideACallbackGivesItsPlacesBack() throws Exception {
    // Two places per sandbox and per tenant: before the fix, two leaked places stopped every later call.
    SandboxSettings.Fairness fairness = new SandboxSettings.Fairness(100, 2, 2, Duration.ofSeconds(10), 200, 2000);
    try (SessionFixture sf = new SessionFixture(tmp, HostileRunner.ensure(), 4, Duration.ofSeconds(30), fairness)) {
      Counting callbacks = new Counting();
      callbacks.throwError = true;
      SandboxSession s = await(sf.service.open(sf.fx.tenantA, Scope.ALL, callbacks));
      try {
        CellOutcome flood = await(s.execute("#flood 10 search 3", wall(20_000), CellListener.NONE));
        assertThat(flood.stdout()).as(flood.toString()).isEqualTo("RuntimeError=10\n");
        callbacks.throwError = false;
        CellOutcome after = await(s.execute("#search ferry", wall(20_000), CellListener.NONE));
        assertThat(after.stdout()).as(after.toString()).isEqualTo("hits=1\n");
        assertThat(callbacks.searches.get()).isEqualTo(11);
      } finally {
        await(s.close());
      }
      sf.assertClean();
    }
  }
}
