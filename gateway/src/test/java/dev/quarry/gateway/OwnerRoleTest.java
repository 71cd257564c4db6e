package dev.quarry.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.support.Await;
import dev.quarry.telemetry.QuarryMetrics;
import dev.quarry.support.TestDatabase;
import io.vertx.core.Vertx;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("The owner role (QUARRY_PG_USER) only migrates and builds the index at start-up (real gateway, real PostgreSQL)")
class OwnerRoleTest {

  @Test
  @DisplayName("once the gateway has started no owner session stays open, and its start-up sweep ends an analysis a dead gateway left running")
  void noOwnerSessionAfterStartUp() throws Exception {
    try (TestDatabase db = TestDatabase.create()) {
      UUID tenant = UUID.randomUUID();
      UUID abandoned = UUID.randomUUID();
      try (Connection c = db.jdbc()) {
        update(c, "INSERT INTO tenants (id, name) VALUES (?, 'owner-role-test')", tenant);
        // Running for a day: far past its five-minute budget and the sweep's ten-minute grace.
        update(c, "INSERT INTO analyses (id, tenant_id, question, scope, preload, budgets, model, status, created_at)"
            + " VALUES (?, ?, 'q', '{}', '{}', '{\"wall_time_ms\": 300000}', 'm', 'running', now() - interval '1 day')", abandoned, tenant);
      }
      Path dataDir = Files.createTempDirectory("quarry-owner-role");
      QuarryMetrics metrics = new QuarryMetrics();
      Vertx vertx = Gateway.vertx(metrics);
      try {
        Gateway gateway = new Gateway(db.config().withDataDir(dataDir).withHttpPort(0), OpsSettings.DEFAULTS, metrics);
        vertx.deployVerticle(gateway).await();

        Await.until(() -> "failed".equals(status(db, abandoned)), Duration.ofSeconds(30),
            "the gateway's sweep to end the abandoned analysis");
        assertThat(errorType(db, abandoned)).isEqualTo("GatewayLost");
        // A backend ends a moment after its client closes (this test's own status reads are owner
        // sessions too), so "stays open" is: still there once such endings had time to land.
        Await.until(() -> ownerSessions(db) == 0, Duration.ofSeconds(10),
            "no session of " + db.config().pgUser() + " besides this test's own, once started");
        assertThat(appSessions(db)).as("the gateway works through the app role").isPositive();
      } finally {
        vertx.close().await();
        try (var walk = Files.walk(dataDir)) {
          walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
      }
    }
  }

  private static void update(Connection c, String sql, UUID... ids) throws SQLException {
    try (PreparedStatement s = c.prepareStatement(sql)) {
      for (int i = 0; i < ids.length; i++) {
        s.setObject(i + 1, ids[i]);
      }
      s.executeUpdate();
    }
  }

  private static String status(TestDatabase db, UUID id) {
    return column(db, "status", id);
  }

  private static String errorType(TestDatabase db, UUID id) {
    return column(db, "error_type", id);
  }

  private static String column(TestDatabase db, String column, UUID id) {
    try (Connection c = db.jdbc(); PreparedStatement s = c.prepareStatement("SELECT " + column + " FROM analyses WHERE id = ?")) {
      s.setObject(1, id);
      try (ResultSet rs = s.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private static long ownerSessions(TestDatabase db) {
    try {
      return sessions(db, db.config().pgUser());
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private static long appSessions(TestDatabase db) throws SQLException {
    return sessions(db, db.config().pgAppUser());
  }

  private static long sessions(TestDatabase db, String role) throws SQLException {
    try (Connection c = db.jdbc(); PreparedStatement s = c.prepareStatement(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND usename = ? AND pid <> pg_backend_pid()")) {
      s.setString(1, role);
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}
