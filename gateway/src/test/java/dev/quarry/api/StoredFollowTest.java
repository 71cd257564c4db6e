package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.agent.EventWakeups;
import dev.quarry.support.Await;
import dev.quarry.support.SseClient;
import dev.quarry.tenancy.Tenants;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * {@code GET /v1/analyses/{id}/events} of an analysis that runs on another replica (here: recorded
 * {@code running} with no analysis running in this gateway, its events written as that replica
 * writes them, in a transaction that announces them on {@link EventWakeups#CHANNEL}): the stream
 * sends what is stored, then each batch as it is committed, every event once and in order, and ends
 * with the terminal event; a lost announcement costs a poll, not an event; an analysis that is gone,
 * or ended without a terminal event long enough ago, ends the stream.
 */
@DisplayName("An analysis followed through the store, as on a replica that does not run it")
class StoredFollowTest {
  private static TestGateway gateway;

  @BeforeAll
  static void start() throws Exception {
    gateway = TestGateway.start();
  }

  @AfterAll
  static void stop() throws Exception {
    gateway.close();
  }

  private static UUID running() throws Exception {
    UUID id = UUID.randomUUID();
    try (Connection c = gateway.database().jdbc(); Statement s = c.createStatement()) {
      s.execute("INSERT INTO analyses (id, tenant_id, question, scope, preload, budgets, model, status) VALUES ('" + id
          + "', '" + Tenants.DEFAULT + "', 'Elsewhere?', '{}', '{}', '{}', 'm', 'running')");
    }
    return id;
  }

  private static String body(long seq, String type) {
    return new JsonObject().put("seq", seq).put("type", type).put("at", Instant.now().toString())
        .put("text", "event " + seq).encode();
  }

  /** Stores events from..to of the analysis as its replica does: in one transaction that announces them (or not). */
  private static void write(UUID id, long from, long to, String lastType, boolean announce) throws Exception {
    try (Connection c = gateway.database().jdbc()) {
      c.setAutoCommit(false);
      try (PreparedStatement insert = c.prepareStatement(
          "INSERT INTO analysis_events (tenant_id, analysis_id, seq, type, body) VALUES (?, ?, ?, ?, ?)")) {
        for (long seq = from; seq <= to; seq++) {
          String type = seq == to ? lastType : "output";
          insert.setObject(1, Tenants.DEFAULT);
          insert.setObject(2, id);
          insert.setLong(3, seq);
          insert.setString(4, type);
          insert.setString(5, body(seq, type));
          insert.addBatch();
        }
        insert.executeBatch();
      }
      if (announce) {
        try (PreparedStatement notify = c.prepareStatement("SELECT pg_notify(?, ?)")) {
          notify.setString(1, EventWakeups.CHANNEL);
          notify.setString(2, id + " " + to);
          notify.execute();
        }
      }
      c.commit();
    }
  }

  private static SseClient follow(UUID id, long lastEventId) {
    return SseClient.get(gateway.url(), "/v1/analyses/" + id + "/events", gateway.apiKey(), lastEventId);
  }

  private static List<Long> seqs(SseClient follower) {
    return follower.events().stream().map(SseClient.Event::seq).toList();
  }

  @Test
  @DisplayName("each batch arrives as it is committed (well inside the poll), every event once and in order,"
      + " and the stream ends with the terminal event")
  void liveAndComplete() throws Exception {
    UUID id = running();
    write(id, 1, 3, "output", true);
    try (SseClient follower = follow(id, 0)) {
      Await.until(() -> follower.events().size() == 3, Duration.ofSeconds(10), "the stored events");
      for (int batch = 0; batch < 5; batch++) {
        long from = 4 + batch * 4L;
        long t0 = System.nanoTime();
        write(id, from, from + 3, "output", true);
        Await.until(() -> follower.events().size() == from + 3, Duration.ofSeconds(10), "batch " + batch);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        // Well inside the poll: it was the announcement that woke the follower.
        assertThat(ms).as("batch %d arrived after %d ms", batch, ms).isLessThan(StoredFollow.POLL.toMillis());
      }
      write(id, 24, 25, "answer", true);
      follower.done().get(10, TimeUnit.SECONDS);
      assertThat(seqs(follower)).containsExactlyElementsOf(java.util.stream.LongStream.rangeClosed(1, 25).boxed().toList());
      assertThat(follower.events().get(24).type()).isEqualTo("answer");
    }
  }

  @Test
  @DisplayName("a write whose announcement was lost arrives at the next poll; Last-Event-ID resumes after its event")
  void lostAnnouncementAndResume() throws Exception {
    UUID id = running();
    write(id, 1, 2, "output", true);
    try (SseClient follower = follow(id, 1)) {
      Await.until(() -> follower.events().size() == 1, Duration.ofSeconds(10), "the stored event after 1");
      write(id, 3, 5, "output", false);
      Await.until(() -> follower.events().size() == 4, StoredFollow.POLL.multipliedBy(3), "the unannounced events");
      write(id, 6, 6, "failed", false);
      follower.done().get(StoredFollow.POLL.multipliedBy(3).toSeconds(), TimeUnit.SECONDS);
      assertThat(seqs(follower)).containsExactly(2L, 3L, 4L, 5L, 6L);
    }
  }

  @Test
  @DisplayName("the stream ends without a terminal event once the analysis is gone, or ended long enough ago without one")
  void endsWithoutTerminal() throws Exception {
    UUID gone = running();
    write(gone, 1, 1, "output", true);
    try (SseClient follower = follow(gone, 0)) {
      Await.until(() -> follower.events().size() == 1, Duration.ofSeconds(10), "the stored event");
      try (Connection c = gateway.database().jdbc(); Statement s = c.createStatement()) {
        s.execute("DELETE FROM analyses WHERE id = '" + gone + "'");
      }
      follower.done().get(StoredFollow.POLL.multipliedBy(3).toSeconds(), TimeUnit.SECONDS);
      assertThat(seqs(follower)).containsExactly(1L);
    }
    UUID ended = running();
    write(ended, 1, 2, "output", true);
    try (Connection c = gateway.database().jdbc(); Statement s = c.createStatement()) {
      // Ended just short of settled: followed, then ended when it settles, its terminal event never stored.
      s.execute("UPDATE analyses SET status = 'failed', finished_at = now() - interval '"
          + (StoredFollow.SETTLED.toSeconds() - 2) + " seconds' WHERE id = '" + ended + "'");
    }
    try (SseClient follower = follow(ended, 0)) {
      follower.done().get(StoredFollow.POLL.multipliedBy(4).toSeconds() + 2, TimeUnit.SECONDS);
      assertThat(seqs(follower)).containsExactly(1L, 2L);
    }
  }
}
