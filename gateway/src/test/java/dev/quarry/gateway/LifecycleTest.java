package dev.quarry.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quarry.api.ApiError;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("The drain on shutdown")
class LifecycleTest {
  private Vertx vertx;
  private Lifecycle lifecycle;
  private final List<String> events = new CopyOnWriteArrayList<>();

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
    lifecycle = new Lifecycle(vertx);
    lifecycle.onShutdown("remove sandboxes", () -> {
      events.add("cleanup");
      return Future.succeededFuture();
    });
  }

  @AfterEach
  void tearDown() {
    vertx.close().await();
  }

  @Test
  @DisplayName("lets running work finish within the grace period, then runs the cleanups; nothing is cancelled")
  void finishesWithinGrace() {
    Lifecycle.Work work = lifecycle.begin("analysis", reason -> events.add("cancelled"));
    Future<Void> drained = lifecycle.drain(Duration.ofMinutes(5));

    assertThat(lifecycle.state()).isEqualTo(Lifecycle.State.DRAINING);
    assertThat(drained.isComplete()).as("drain waits for running work").isFalse();
    assertThat(events).isEmpty();
    events.add("work done");
    work.close();

    drained.await();
    assertThat(events).containsExactly("work done", "cleanup");
    assertThat(lifecycle.state()).isEqualTo(Lifecycle.State.STOPPED);
  }

  @Test
  @DisplayName("refuses new work with 503 shutting_down once draining")
  void refusesNewWork() {
    lifecycle.drain(Duration.ofSeconds(30));
    assertThatThrownBy(() -> lifecycle.begin("analysis", reason -> {}))
        .isInstanceOfSatisfying(ApiError.class, e -> {
          assertThat(e.status()).isEqualTo(503);
          assertThat(e.code()).isEqualTo("shutting_down");
        });
    assertThat(lifecycle.running()).isZero();
  }

  @Test
  @DisplayName("cancels work still running when the grace period is over, waits for it to close, then cleans up")
  void cancelsAfterGrace() {
    List<String> reasons = new CopyOnWriteArrayList<>();
    Lifecycle.Work[] work = new Lifecycle.Work[1];
    work[0] = lifecycle.begin("analysis", reason -> {
      reasons.add(reason);
      events.add("cancelled");
      // The work records its cancelled status asynchronously, then ends.
      vertx.runOnContext(v -> work[0].close());
    });

    lifecycle.drain(Duration.ofMillis(100)).await();

    assertThat(reasons).singleElement().asString().contains("shut down");
    assertThat(events).containsExactly("cancelled", "cleanup");
    assertThat(lifecycle.running()).isZero();
  }

  @Test
  @DisplayName("runs every cleanup even when one fails, and drains at once when idle")
  void cleanupFailureDoesNotStopTheRest() {
    Lifecycle fresh = new Lifecycle(vertx);
    fresh.onShutdown("fails", () -> {
      events.add("first");
      return Future.failedFuture("engine gone");
    });
    fresh.onShutdown("throws", () -> {
      throw new IllegalStateException("bug");
    });
    fresh.onShutdown("last", () -> {
      events.add("last");
      return Future.succeededFuture();
    });
    fresh.drain(Duration.ofMinutes(5)).await();
    assertThat(events).containsExactly("first", "last");
    assertThat(fresh.drain(Duration.ofMinutes(5)).succeeded()).as("a second drain is the same, finished one").isTrue();
  }

  @Test
  @DisplayName("runs the later cleanups and finishes when a cleanup never completes")
  void hungCleanupDoesNotStopTheRest() {
    Lifecycle fresh = new Lifecycle(vertx);
    fresh.onShutdown("never ends", () -> {
      events.add("hung");
      return Promise.promise().future();
    });
    fresh.onShutdown("remove sandboxes", () -> {
      events.add("last");
      return Future.succeededFuture();
    });
    fresh.drain(Duration.ofMinutes(5)).await();
    assertThat(events).containsExactly("hung", "last");
    assertThat(fresh.state()).isEqualTo(Lifecycle.State.STOPPED);
  }
}
