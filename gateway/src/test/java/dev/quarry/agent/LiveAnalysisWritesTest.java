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
    store.insert(tenant, id, "q", List.of(), List.of(), Budgets.DEFAULTS, "m").await();
    return new LiveAnalysis(id, tenant, store, Clock.systemUTC());
  }

  private static AnalysisStore.StepRecord step(int ordinal) {
    return new AnalysisStore.StepRecord(ordinal, "print(" + ordinal + ")", new JsonObject().put("success", true),
        OffsetDateTime.now(ZoneOffset.UTC), 3);
  }

  @Test
  @DisplayName("events, steps and usage held during a turn are all stored, events in order, once flushed")
  void heldThenStored() throws Exception {
    LiveAnalysis live = analysis(newTenant(db));
    List<AnalysisEvent> seen = new ArrayList<>();
    live.listen(0, seen::add);
    live.emit(AnalysisEvent.MODEL_TURN, new JsonObject().put("turn", 1));
    live.emit(AnalysisEvent.CODE, new JsonObject().put("step", 1));
    live.usage(new JsonObject().put("model_turns", 1));
    live.step(step(1));
    live.emit(AnalysisEvent.CELL_RESULT, new JsonObject().put("step", 1));
    assertThat(seen).as("listeners get events at once, whatever the store").hasSize(3);
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
