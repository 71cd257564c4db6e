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
  static class Counting implements Callbacks {
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
  /** Search answers at once; each llm() is held until the test answers it. */
  static final class HeldLlm extends Counting {
    final java.util.List<io.vertx.core.Promise<String>> held = new java.util.concurrent.CopyOnWriteArrayList<>();

    @Override
    public Future<String> llm(String prompt) {
      io.vertx.core.Promise<String> p = io.vertx.core.Promise.promise();
      held.add(p);
      return p.future();
    }
  }

  @Test
  @DisplayName("an llm() still running when its cell times out or its session closes gives the tenant's places"
      + " back at once, and its late answer gives back nothing twice (R6-8)")
  void callbacksOutlivingTheirCellGiveTheirPlacesBack() throws Exception {
    // Two places per tenant: before the fix, two held llm() calls stopped the tenant's next search.
    SandboxSettings.Fairness fairness = new SandboxSettings.Fairness(100, 2, 2, Duration.ofSeconds(10), 200, 2000);
    try (SessionFixture sf = new SessionFixture(tmp, RunnerImage.ensure(), 4, Duration.ofSeconds(30), fairness)) {
      HeldLlm callbacks = new HeldLlm();
      SandboxSession a1 = await(sf.service.open(sf.fx.tenantA, Scope.ALL, callbacks));
      SandboxSession a2 = await(sf.service.open(sf.fx.tenantA, Scope.ALL, callbacks));
      SandboxSession b = await(sf.service.open(sf.fx.tenantA, Scope.ALL, callbacks));
      try {
        Future<CellOutcome> c1 = a1.execute("await llm('hold')", wall(1_500), CellListener.NONE);
        Future<CellOutcome> c2 = a2.execute("await llm('hold')", wall(1_500), CellListener.NONE);
        CellOutcome o1 = await(c1);
        CellOutcome o2 = await(c2);
        assertThat(o1.error().type()).as(o1.toString()).isEqualTo(CellError.TIMEOUT);
        assertThat(o2.error().type()).as(o2.toString()).isEqualTo(CellError.TIMEOUT);
        assertThat(callbacks.held).as("both llm() calls were being served").hasSize(2);
        assertThat(sf.service.callbacksInFlight(sf.fx.tenantA)).as("places held after the cells ended").isZero();

        long started = System.nanoTime();
        CellOutcome search = await(b.execute("print(len(await search('ferry')))", wall(10_000), CellListener.NONE));
        assertThat(search.stdout()).as(search.toString()).isEqualTo("1\n");
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));

        // A session closed while its cell's llm() runs gives the place back too.
        Future<CellOutcome> c3 = b.execute("await llm('hold')", wall(20_000), CellListener.NONE);
        dev.quarry.support.Await.until(() -> callbacks.held.size() == 3, Duration.ofSeconds(20),
            "the third llm() call to be served");
        assertThat(sf.service.callbacksInFlight(sf.fx.tenantA)).isEqualTo(1);
        await(b.close());
        assertThat(await(c3).error().type()).isEqualTo(CellError.CANCELLED);
        assertThat(sf.service.callbacksInFlight(sf.fx.tenantA)).isZero();

        // The model answers late: nothing is given back twice (the count would go below zero). A
        // sandbox opened and a cell run after the late answers is the wait for them to be handled.
        callbacks.held.forEach(p -> p.tryComplete("late"));
        SandboxSession d = await(sf.service.open(sf.fx.tenantA, Scope.ALL, callbacks));
        CellOutcome again = await(d.execute("print(len(await search('ferry')))", wall(10_000), CellListener.NONE));
        await(d.close());
        assertThat(again.stdout()).as(again.toString()).isEqualTo("1\n");
        assertThat(sf.service.callbacksInFlight(sf.fx.tenantA)).isZero();
        assertThat(sf.service.callbacksInFlight(sf.fx.tenantA)).isZero();
      } finally {
        await(a1.close());
        await(a2.close());
        await(b.close());
      }
      sf.assertClean();
    }
  }
}
