package dev.quarry.agent;

import static dev.quarry.ingest.IngestFixture.newTenant;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.store.Database;
import dev.quarry.support.TestDatabase;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("Analyses a dead gateway left running (real PostgreSQL)")
class AbandonedAnalysesTest {
  private static TestDatabase db;
  private static Vertx vertx;
  private static Pool pool;
  private static AnalysisStore store;

  @BeforeAll
  static void start() {
    db = TestDatabase.create();
    vertx = Vertx.vertx();
    pool = Database.pool(vertx, db.config());
    store = new AnalysisStore(pool);
  }

  @AfterAll
  static void stop() {
    pool.close().await();
    vertx.close().await();
    db.close();
  }

  /** An analysis as a gateway leaves it when it is killed: running, with some events stored. */
  private static UUID running(UUID tenant, Duration age, int events) throws Exception {
    UUID id = UUID.randomUUID();
    store.insert(tenant, id, "q", List.of(), List.of(), Budgets.DEFAULTS, "m", null, null).await();
    List<AnalysisEvent> stored = new java.util.ArrayList<>();
    for (int seq = 1; seq <= events; seq++) {
      stored.add(AnalysisEvent.of(seq, seq == 1 ? AnalysisEvent.STARTED : AnalysisEvent.MODEL_TURN,
          System.currentTimeMillis(), new JsonObject()));
    }
    if (!stored.isEmpty()) {
      store.progress(tenant, id, null, stored, List.of(), List.of(), null).await();
    }
    try (Connection c = db.jdbc();
        PreparedStatement s = c.prepareStatement(
            "UPDATE analyses SET created_at = now() - make_interval(secs => ?),"
                + " deadline_at = now() - make_interval(secs => ?) + make_interval(secs => ?) WHERE id = ?")) {
      s.setDouble(1, age.toSeconds());
      s.setDouble(2, age.toSeconds());
      s.setDouble(3, budget().toSeconds());
      s.setObject(4, id);
      s.executeUpdate();
    }
    return id;
  }

  private static Duration budget() {
    return Duration.ofMillis(Budgets.DEFAULTS.wallTimeMs());
  }

  @Test
  @DisplayName("one running past its wall time and the grace ends GatewayLost with one terminal event; others stay")
  void endsOnlyTheAbandoned() throws Exception {
    UUID tenant = newTenant(db);
    UUID otherTenant = newTenant(db);
    Duration grace = Duration.ofMinutes(10);
    Duration old = budget().plus(grace).plusMinutes(5);
    UUID abandoned = running(tenant, old, 3);
    UUID abandonedNoEvents = running(otherTenant, old, 0);
    UUID young = running(tenant, budget(), 2);
    UUID finished = running(tenant, old, 1);
    store.finish(tenant, finished, null, new AnalysisStore.Outcome("succeeded", null, null, "a", "p",
        new io.vertx.core.json.JsonArray(), new JsonObject())).await();

    List<UUID> ended = new AbandonedAnalyses(pool, grace).sweep().await();

    assertThat(ended).contains(abandoned, abandonedNoEvents).doesNotContain(young, finished);
    JsonObject record = store.get(tenant, abandoned).await().orElseThrow();
    assertThat(record.getString("status")).isEqualTo("failed");
    assertThat(record.getString("finished_at")).isNotNull();
    assertThat(record.toString()).contains("GatewayLost");
    List<AnalysisEvent> events = store.events(tenant, abandoned, 0).await();
    assertThat(events).extracting(AnalysisEvent::seq).containsExactly(1L, 2L, 3L, 4L);
    AnalysisEvent last = events.get(3);
    assertThat(last.terminal()).isTrue();
    JsonObject body = new JsonObject(last.json());
    assertThat(body.getLong("seq")).isEqualTo(4L);
    assertThat(body.getString("type")).isEqualTo(AnalysisEvent.FAILED);
    assertThat(java.time.Instant.parse(body.getString("at"))).isNotNull();
    assertThat(body.getJsonObject("error").getString("type")).isEqualTo("GatewayLost");
    assertThat(body.getJsonObject("usage")).isNotNull();
    assertThat(store.events(otherTenant, abandonedNoEvents, 0).await())
        .extracting(AnalysisEvent::seq, AnalysisEvent::type)
        .containsExactly(org.assertj.core.groups.Tuple.tuple(1L, AnalysisEvent.FAILED));

    assertThat(store.get(tenant, young).await().orElseThrow().getString("status")).isEqualTo("running");
    assertThat(store.get(tenant, finished).await().orElseThrow().getString("status")).isEqualTo("succeeded");
    assertThat(store.events(tenant, young, 0).await()).hasSize(2);

    assertThat(new AbandonedAnalyses(pool, grace).sweep().await()).as("a second sweep finds nothing").isEmpty();
  }

  @Test
  @DisplayName("the sweep runs as the gateway's own role, which still reads no tenant's rows by itself; no other role may call it")
  void sweepIsTheAppRolesOnlyWayAcross() throws Exception {
    UUID tenant = newTenant(db);
    UUID abandoned = running(tenant, budget().plusHours(2), 1);
    try (Connection app = db.appJdbc(); java.sql.Statement s = app.createStatement()) {
      try (java.sql.ResultSet rs = s.executeQuery("SELECT count(*) FROM analyses")) {
        rs.next();
        assertThat(rs.getLong(1)).as("analyses the app role reads without a tenant set").isZero();
      }
      try (java.sql.ResultSet rs = s.executeQuery("SELECT current_user, (SELECT rolsuper OR rolbypassrls FROM pg_roles"
          + " WHERE rolname = current_user)")) {
        rs.next();
        assertThat(rs.getString(1)).isEqualTo(db.config().pgAppUser());
        assertThat(rs.getBoolean(2)).as("the app role is a superuser or bypasses row-level security").isFalse();
      }
    }
    assertThat(new AbandonedAnalyses(pool, Duration.ofMinutes(10)).sweep().await()).contains(abandoned);
    assertThat(store.get(tenant, abandoned).await().orElseThrow().getString("status")).isEqualTo("failed");
    try (Connection owner = db.jdbc(); java.sql.Statement s = owner.createStatement();
        java.sql.ResultSet rs = s.executeQuery("""
            SELECT coalesce(array_agg(CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_get_userbyid(a.grantee) END
                                      ORDER BY a.grantee), '{}')::text
              FROM pg_proc p CROSS JOIN LATERAL aclexplode(p.proacl) a
             WHERE p.proname = 'end_abandoned_analyses' AND a.privilege_type = 'EXECUTE'
               AND a.grantee <> p.proowner""")) {
      rs.next();
      assertThat(rs.getString(1)).as("who besides its owner may run the sweep")
          .isEqualTo("{" + db.config().pgAppUser() + "}");
    }
  }
}
