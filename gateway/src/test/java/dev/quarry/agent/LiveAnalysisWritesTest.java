package dev.quarry.agent;

import static dev.quarry.ingest.IngestFixture.newTenant;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.support.TestDatabase;
import dev.quarry.support.TestStack;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.time.Clock;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("A running analysis' writes (real PostgreSQL)")
class LiveAnalysisWritesTest {
  @AutoClose
  private static final TestStack stack = TestStack.start();
  private static final TestDatabase db = stack.db();
  private static final Vertx vertx = stack.vertx();
  private static final Pool pool = stack.pool();
  private static AnalysisStore store;

  @BeforeAll
  static void start() {
    store = new AnalysisStore(pool);
  }

  private static LiveAnalysis analysis(UUID tenant) {
    UUID id = UUID.randomUUID();
    store.insert(tenant, id, "q", List.of(), List.of(), Budgets.DEFAULTS, "m", null, null).await();
    return new LiveAnalysis(id, tenant, store, Clock.systemUTC());
  }

  private static AnalysisStore.StepRecord step(int ordinal) {
    return new AnalysisStore.StepRecord(ordinal, "print(" + ordinal + ")", new JsonObject().put("success", true),
        OffsetDateTime.now(ZoneOffset.UTC), 3);
  }

  @Test
  @DisplayName("events, steps and usage held during a turn are all stored, events in order, once flushed; listeners"
      + " get each event once it is stored")
  void heldThenStored() throws Exception {
    LiveAnalysis live = analysis(newTenant(db));
    List<AnalysisEvent> seen = java.util.Collections.synchronizedList(new ArrayList<>());
    live.listen(0, seen::add);
    live.emit(AnalysisEvent.MODEL_TURN, new JsonObject().put("turn", 1));
    live.emit(AnalysisEvent.CODE, new JsonObject().put("step", 1));
    live.usage(new JsonObject().put("model_turns", 1));
    live.step(step(1));
    live.emit(AnalysisEvent.CELL_RESULT, new JsonObject().put("step", 1));
    live.store();
    live.emit(AnalysisEvent.MODEL_TURN, new JsonObject().put("turn", 2));
    live.usage(new JsonObject().put("model_turns", 2));
    live.step(step(2));
    live.flushed().await(30, TimeUnit.SECONDS);

    assertThat(store.events(live.tenantId(), live.id(), 0).await())
        .extracting(AnalysisEvent::seq, AnalysisEvent::type)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(1L, AnalysisEvent.MODEL_TURN),
            org.assertj.core.groups.Tuple.tuple(2L, AnalysisEvent.CODE),
            org.assertj.core.groups.Tuple.tuple(3L, AnalysisEvent.CELL_RESULT),
            org.assertj.core.groups.Tuple.tuple(4L, AnalysisEvent.MODEL_TURN));
    // Listeners get the events once they are stored (decision record 0100), in order, each once.
    assertThat(List.copyOf(seen)).extracting(AnalysisEvent::seq).containsExactly(1L, 2L, 3L, 4L);
    JsonObject stored = store.get(live.tenantId(), live.id()).await().orElseThrow();
    assertThat(stored.getJsonArray("steps").stream().map(s -> ((JsonObject) s).getInteger("step")).toList())
        .containsExactly(1, 2);
    assertThat(stored.getJsonObject("usage").getInteger("model_turns")).as("the latest usage wins").isEqualTo(2);
    assertThat(live.writeFailure()).isNull();
  }

  @Test
  @DisplayName("a chatty cell's events are written once " + LiveAnalysis.HELD_EVENTS
      + " pile up, without waiting for the loop")
  void manyEventsWrittenWithoutFlush() throws Exception {
    LiveAnalysis live = analysis(newTenant(db));
    for (int i = 0; i < LiveAnalysis.HELD_EVENTS; i++) {
      live.emit(AnalysisEvent.OUTPUT, new JsonObject().put("step", 1).put("text", "line " + i + "\n"));
    }
    live.writing().await(30, TimeUnit.SECONDS);
    assertThat(store.events(live.tenantId(), live.id(), 0).await()).hasSize(LiveAnalysis.HELD_EVENTS);
  }

  @Test
  @DisplayName("a cell's events are stored on their own (a batch " + LiveAnalysis.LINGER_MS + " ms after its first"
      + " event), without the loop asking; each write is announced to every replica with its last seq")
  void storedAsTheyComeAndAnnounced() throws Exception {
    dev.quarry.store.Notifications notifications = new dev.quarry.store.Notifications(vertx,
        dev.quarry.store.Database.appConnectOptions(db.config()));
    List<String> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
    java.util.concurrent.CompletableFuture<Void> listening = new java.util.concurrent.CompletableFuture<>();
    notifications.listen(EventWakeups.CHANNEL, heard::add, () -> listening.complete(null));
    notifications.start().await(30, TimeUnit.SECONDS);
    try {
      listening.get(30, TimeUnit.SECONDS);
      LiveAnalysis live = analysis(newTenant(db));
      long t0 = System.nanoTime();
      for (int i = 1; i <= 3; i++) {
        live.emit(AnalysisEvent.OUTPUT, new JsonObject().put("step", 1).put("text", "line " + i + "\n"));
      }
      // No store(), no flush: the events go to the store on their own, announced as they become visible.
      dev.quarry.support.Await.until(() -> heard.contains(live.id() + " 3"), java.time.Duration.ofSeconds(10),
          "the write of events 1-3 to be announced");
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertThat(store.events(live.tenantId(), live.id(), 0).await()).extracting(AnalysisEvent::seq)
          .containsExactly(1L, 2L, 3L);
      System.out.printf("three events stored and announced %d ms after the first was made%n", ms);
    } finally {
      notifications.close().await(30, TimeUnit.SECONDS);
    }
  }

  @Test
  @DisplayName("a write PostgreSQL refuses is remembered, and later writes still go through")
  void failedWriteRemembered() throws Exception {
    LiveAnalysis live = analysis(newTenant(db));
    live.step(step(1));
    live.flushed().await(30, TimeUnit.SECONDS);
    assertThat(live.writeFailure()).isNull();
    // The same ordinal again breaks the steps' primary key: the whole batch, events included, fails.
    live.emit(AnalysisEvent.CODE, new JsonObject().put("step", 1));
    live.step(step(1));
    live.flushed().await(30, TimeUnit.SECONDS);
    assertThat(live.writeFailure()).isNotNull().hasMessageContaining("analysis_steps");
    live.emit(AnalysisEvent.FAILED, new JsonObject().put("status", "failed"));
    live.flushed().await(30, TimeUnit.SECONDS);
    assertThat(store.events(live.tenantId(), live.id(), 0).await()).extracting(AnalysisEvent::type)
        .containsExactly(AnalysisEvent.FAILED);
  }
}
