package dev.quarry.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quarry.store.Database;
import dev.quarry.store.DatabaseUnavailable;
import dev.quarry.support.ThrowawayCluster;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * An analysis that runs or ends while PostgreSQL restarts still gets its steps, events and end
 * recorded once the database is back: on a cluster of the test's own, which it stops and starts.
 */
class AnalysisEndRecordingTest {
  private static ThrowawayCluster cluster;
  private static Vertx vertx;
  private static Pool pool;
  private static AnalysisStore store;
  private static final UUID TENANT = UUID.randomUUID();

  @BeforeAll
  static void start() throws Exception {
    cluster = ThrowawayCluster.create();
    cluster.query("INSERT INTO tenants (id, name) VALUES ('" + TENANT + "', 'restart')");
    vertx = Vertx.vertx();
    pool = Database.pool(vertx, cluster.config());
    store = new AnalysisStore(pool);
  }

  @AfterAll
  static void stop() throws Exception {
    try {
      if (pool != null) {
        pool.close().await();
      }
      if (vertx != null) {
        vertx.close().await();
      }
    } finally {
      if (cluster != null) {
        cluster.close();
      }
    }
  }

  @Test
  @DisplayName("an end that meets a stopped database is retried and recorded once the database is back")
  void endRecordedAfterRestart() throws Exception {
    UUID id = UUID.randomUUID();
    store.insert(TENANT, id, "what survives a restart?", List.of(), List.of(), Budgets.DEFAULTS, "scripted", null, null).await();
    AnalysisStore.Outcome outcome = new AnalysisStore.Outcome("failed", "ModelUnavailable", "the model endpoint failed",
        null, null, new JsonArray(), new JsonObject().put("model_turns", 1));

    cluster.stop();
    // The plain write fails, typed: the outage is real when the durable one starts.
    assertThatThrownBy(() -> store.finish(TENANT, id, null, outcome).await()).isInstanceOf(DatabaseUnavailable.class);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread ending = Thread.ofVirtual().start(() -> {
      try {
        store.finishDurably(TENANT, id, null, outcome);
      } catch (Throwable t) {
        failure.set(t);
      }
    });
    cluster.start();
    ending.join(AnalysisStore.END_RETRY.toMillis());

    assertThat(ending.isAlive()).as("still retrying after %s", AnalysisStore.END_RETRY).isFalse();
    assertThat(failure.get()).isNull();
    assertThat(cluster.query("SELECT status, error_type, finished_at IS NOT NULL FROM analyses WHERE id = '" + id + "'"))
        .containsExactly("failed|ModelUnavailable|t");
  }

  @Test
  @DisplayName("a step and events written while the database is down are stored once it is back, in order")
  void stepsAndEventsKeptThroughRestart() throws Exception {
    UUID id = UUID.randomUUID();
    store.insert(TENANT, id, "are the steps kept?", List.of(), List.of(), Budgets.DEFAULTS, "scripted", null, null).await();

    cluster.stop();
    Future<Void> progress;
    try {
      // What the loop writes once a model turn (LiveAnalysis.store): the turn's events and its ended step.
      progress = store.progress(TENANT, id, null, List.of(
              AnalysisEvent.of(1, AnalysisEvent.STARTED, 0, new JsonObject()),
              AnalysisEvent.of(2, AnalysisEvent.CODE, 0, new JsonObject().put("step", 1).put("code", "print(1)"))),
          List.of(), List.of(new AnalysisStore.StepRecord(1, "print(1)",
              new JsonObject().put("success", true).put("stdout", "1\n"), OffsetDateTime.now(ZoneOffset.UTC), 5)),
          null);
    } finally {
      cluster.start();
    }
    progress.toCompletionStage().toCompletableFuture().get(AnalysisStore.END_RETRY.toMillis(), TimeUnit.MILLISECONDS);

    assertThat(cluster.query("SELECT ordinal, code FROM analysis_steps WHERE analysis_id = '" + id + "'"))
        .containsExactly("1|print(1)");
    assertThat(cluster.query("SELECT seq, type FROM analysis_events WHERE analysis_id = '" + id + "' ORDER BY seq"))
        .containsExactly("1|started", "2|code");
  }
}
