package dev.quarry.sandbox;

import static dev.quarry.sandbox.SessionFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.support.Await;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A noisy tenant's sandbox does its worst with its stream (the hostile runner: a flood of
 * callbacks, a runner that stops reading) while a quiet tenant's sandbox on the same gateway keeps
 * being served.
 */
@DisplayName("Callbacks are shared fairly between sandboxes and tenants")
class FairCallbacksTest {
  @TempDir Path tmp;

  /** Callbacks that take a little while each (as a search does) and remember how many ran at once. */
  static final class Counting implements Callbacks {
    final Vertx vertx;
    final AtomicInteger inFlight;
    final AtomicInteger maxInFlight;
    final AtomicInteger served = new AtomicInteger();
    final String content;

    Counting(Vertx vertx, AtomicInteger inFlight, AtomicInteger maxInFlight, int replyChars) {
      this.vertx = vertx;
      this.inFlight = inFlight;
      this.maxInFlight = maxInFlight;
      this.content = "x".repeat(replyChars);
    }

    static Counting alone(Vertx vertx, int replyChars) {
      return new Counting(vertx, new AtomicInteger(), new AtomicInteger(), replyChars);
    }

    @Override
    public Future<JsonArray> search(String query, int limit) {
      int now = inFlight.incrementAndGet();
      maxInFlight.accumulateAndGet(now, Math::max);
      served.incrementAndGet();
      Promise<JsonArray> p = Promise.promise();
      vertx.setTimer(10, t -> {
        inFlight.decrementAndGet();
        p.complete(new JsonArray().add(new JsonObject().put("chunk_id", "c1").put("content", content)));
      });
      return p.future();
    }

    @Override
    public Future<JsonArray> listDocuments() {
      return search("", 1);
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
  @DisplayName("a flood waits its turn: at most the per-sandbox and per-tenant numbers run at once, and the quiet tenant's call is answered meanwhile")
  void floodIsBounded() throws Exception {
    SandboxSettings.Fairness fairness = new SandboxSettings.Fairness(50, 2, 3, Duration.ofSeconds(10), 200, 2000);
    try (SessionFixture sf = new SessionFixture(tmp, HostileRunner.ensure(), 6, Duration.ofSeconds(30), fairness)) {
      AtomicInteger tenantInFlight = new AtomicInteger();
      AtomicInteger tenantMax = new AtomicInteger();
      Counting first = new Counting(sf.vertx, tenantInFlight, tenantMax, 10);
      Counting second = new Counting(sf.vertx, tenantInFlight, tenantMax, 10);
      AtomicInteger firstOwn = new AtomicInteger();
      AtomicInteger firstOwnMax = new AtomicInteger();
      // The first sandbox's own count: the tenant's counter is shared with the second.
      Callbacks firstTracked = new Callbacks() {
        @Override
        public Future<JsonArray> search(String query, int limit) {
          firstOwnMax.accumulateAndGet(firstOwn.incrementAndGet(), Math::max);
          return first.search(query, limit).onComplete(x -> firstOwn.decrementAndGet());
        }

        @Override
        public Future<JsonArray> listDocuments() {
          return search("", 1);
        }

        @Override
        public Future<String> llm(String prompt) {
          return first.llm(prompt);
        }
      };
      Counting quiet = Counting.alone(sf.vertx, 10);
      SandboxSession a1 = await(sf.service.open(sf.fx.tenantA, Scope.ALL, firstTracked));
      SandboxSession a2 = await(sf.service.open(sf.fx.tenantA, Scope.ALL, second));
      SandboxSession b = await(sf.service.open(sf.fx.tenantB, Scope.ALL, quiet));
      try {
        Future<CellOutcome> flood1 = a1.execute("#flood 300 search 5", wall(120_000), CellListener.NONE);
        Future<CellOutcome> flood2 = a2.execute("#flood 300 search 5", wall(120_000), CellListener.NONE);
        Await.until(() -> first.served.get() + second.served.get() >= 20, Duration.ofSeconds(30),
            "the flood got going (20 of its callbacks served)");

        CellOutcome quietOutcome = await(b.execute("#search ferry", wall(30_000), CellListener.NONE));
        assertThat(quietOutcome.success()).as(quietOutcome.toString()).isTrue();
        assertThat(quietOutcome.stdout()).isEqualTo("hits=1\n");
        // 600 calls, at most three at a time at 10 ms each, take a second or more: the quiet call did not queue behind them.
        assertThat(flood1.isComplete() && flood2.isComplete()).as("the floods were still being served").isFalse();

        CellOutcome o1 = await(flood1);
        CellOutcome o2 = await(flood2);
        assertThat(o1.stdout()).isEqualTo("ok=300\n");
        assertThat(o2.stdout()).isEqualTo("ok=300\n");
        assertThat(firstOwnMax.get()).as("callbacks of one sandbox at once").isEqualTo(2);
        assertThat(tenantMax.get()).as("callbacks of one tenant at once").isEqualTo(3);
      } finally {
        await(a1.close());
        await(a2.close());
        await(b.close());
      }
      sf.assertClean();
    }
  }

  @Test
  @DisplayName("a runner that stops reading gets no more replies than it has in flight, then its sandbox is killed with SandboxStalled; the quiet tenant's goes on")
  void stalledStreamIsCut() throws Exception {
    SandboxSettings.Fairness fairness = new SandboxSettings.Fairness(50, 4, 8, Duration.ofMillis(1500), 200, 2000);
    try (SessionFixture sf = new SessionFixture(tmp, HostileRunner.ensure(), 6, Duration.ofSeconds(30), fairness)) {
      // Replies of 512 KiB each: 300 of them unread would be 150 MiB held by the gateway.
      Counting noisy = Counting.alone(sf.vertx, 512 * 1024);
      Counting quiet = Counting.alone(sf.vertx, 10);
      SandboxSession a = await(sf.service.open(sf.fx.tenantA, Scope.ALL, noisy));
      SandboxSession b = await(sf.service.open(sf.fx.tenantB, Scope.ALL, quiet));
      try {
        Future<CellOutcome> stalled = a.execute("#stall 300 100", wall(120_000), CellListener.NONE);
        CellOutcome quietOutcome = await(b.execute("#search ferry", wall(30_000), CellListener.NONE));
        assertThat(quietOutcome.success()).as(quietOutcome.toString()).isTrue();

        CellOutcome out = await(stalled);
        assertThat(out.success()).isFalse();
        assertThat(out.error().type()).isEqualTo(CellError.SANDBOX_STALLED);
        assertThat(out.error().message()).contains("QUARRY_SANDBOX_STALL_MS");
        // What flow control let through before the stream filled, plus the replies in flight then.
        assertThat(noisy.served.get()).as("replies produced for the stalled runner").isLessThan(40);
        assertThat(sf.metrics.registry().find("quarry_sandbox_kills").tag("reason", "stalled").counter().count())
            .isEqualTo(1.0);

        CellOutcome again = await(b.execute("#search ferry", wall(30_000), CellListener.NONE));
        assertThat(again.success()).as(again.toString()).isTrue();
      } finally {
        await(a.close());
        await(b.close());
      }
      sf.assertClean();
    }
  }
}
