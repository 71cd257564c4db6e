package dev.quarry.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quarry.api.TestGateway;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The second fence on its own: the queries here deliberately leave out the tenant filter the
 * gateway's statements carry, and PostgreSQL still shows only the tenant set for the transaction.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("Row-level security, with the gateway's tenant filter dropped")
class RowLevelSecurityTest {
  private TestGateway gateway;
  private TestGateway.NewTenant a;
  private TestGateway.NewTenant b;
  private List<String> tenantTables;

  @BeforeAll
  void start() throws Exception {
    gateway = TestGateway.start();
    a = gateway.createTenant("rls-a");
    b = gateway.createTenant("rls-b");
    for (TestGateway.NewTenant t : List.of(a, b)) {
      for (int i = 0; i < 2; i++) {
        var r = gateway.clientFor(t.apiKey()).post("/v1/documents").sendJsonObject(new JsonObject()
            .put("uri", "doc-" + i + ".md").put("content_type", "text/markdown")
            .put("content", "# Report " + i + " of " + t.id() + "\n\nHarbour dues rose by " + i + " percent.\n"))
            .await();
        assertThat(r.statusCode()).as(r.bodyAsString()).isEqualTo(201);
      }
    }
    tenantTables = new ArrayList<>();
    try (Connection c = gateway.database().jdbc(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT table_name FROM information_schema.columns"
            + " WHERE table_schema = current_schema() AND column_name = 'tenant_id' ORDER BY 1")) {
      while (rs.next()) {
        tenantTables.add(rs.getString(1));
      }
    }
  }

  @AfterAll
  void stop() throws Exception {
    gateway.close();
  }

  /** Rows of a table whose tenant_id is {@code owner}, seen by the app role acting as {@code actor}. */
  private long visibleRowsOf(String table, UUID owner, UUID actor) throws SQLException {
    try (Connection c = gateway.database().appJdbc()) {
      c.setAutoCommit(false);
      try (Statement s = c.createStatement()) {
        if (actor != null) {
          s.execute(Database.setTenant(actor));
        }
        try (ResultSet rs = s.executeQuery("SELECT count(*) FROM " + table + " WHERE tenant_id = '" + owner + "'")) {
          rs.next();
          return rs.getLong(1);
        }
      } finally {
        c.rollback();
      }
    }
  }

  @Test
  @DisplayName("every table with a tenant_id has row-level security enabled and forced, and the knowledge base's tables are among them")
  void everyTenantTableIsFenced() throws SQLException {
    assertThat(tenantTables).contains("documents", "items", "chunks", "chunk_terms", "corpus_stats",
        "term_stats", "api_keys", "tenant_quotas", "token_usage");
    try (Connection c = gateway.database().jdbc(); Statement s = c.createStatement()) {
      for (String table : tenantTables) {
        try (ResultSet rs = s.executeQuery("SELECT relrowsecurity, relforcerowsecurity FROM pg_class"
            + " WHERE oid = '" + table + "'::regclass")) {
          rs.next();
          assertThat(rs.getBoolean(1)).as(table + " row security").isTrue();
          assertThat(rs.getBoolean(2)).as(table + " forced").isTrue();
        }
      }
    }
  }

  @Test
  @DisplayName("the gateway's role neither owns the tables nor bypasses row-level security")
  void appRoleIsUnprivileged() throws SQLException {
    try (Connection c = gateway.database().appJdbc(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT r.rolsuper, r.rolbypassrls,"
            + " (SELECT count(*) FROM pg_tables t WHERE t.schemaname = current_schema() AND t.tableowner = current_user)"
            + " FROM pg_roles r WHERE r.rolname = current_user")) {
      rs.next();
      assertThat(rs.getBoolean(1)).as("superuser").isFalse();
      assertThat(rs.getBoolean(2)).as("bypassrls").isFalse();
      assertThat(rs.getLong(3)).as("tables owned").isZero();
    }
  }

  @Test
  @DisplayName("as tenant B, a query without a tenant filter returns none of A's rows, in any tenant table")
  void otherTenantsRowsAreInvisible() throws SQLException {
    assertThat(visibleRowsOf("documents", a.id(), a.id())).isEqualTo(2);
    assertThat(visibleRowsOf("chunks", a.id(), a.id())).isPositive();
    for (String table : tenantTables) {
      assertThat(visibleRowsOf(table, a.id(), b.id())).as(table + ": A's rows seen as B").isZero();
    }
    // And B's own rows are there, so the zero above is the fence, not an empty table.
    assertThat(visibleRowsOf("documents", b.id(), b.id())).isEqualTo(2);
    assertThat(visibleRowsOf("items", b.id(), b.id())).isPositive();
  }

  @Test
  @DisplayName("with no tenant set, the app role sees no row of any tenant table")
  void noTenantNoRows() throws SQLException {
    for (String table : tenantTables) {
      try (Connection c = gateway.database().appJdbc(); Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT count(*) FROM " + table)) {
        rs.next();
        assertThat(rs.getLong(1)).as(table).isZero();
      }
    }
  }

  @Test
  @DisplayName("the tenant setting is transaction-local: the next transaction on the same connection sees nothing")
  void settingDoesNotOutliveTheTransaction() throws SQLException {
    try (Connection c = gateway.database().appJdbc()) {
      c.setAutoCommit(false);
      try (Statement s = c.createStatement()) {
        s.execute(Database.setTenant(a.id()));
        try (ResultSet rs = s.executeQuery("SELECT count(*) FROM documents")) {
          rs.next();
          assertThat(rs.getLong(1)).isEqualTo(2);
        }
        c.commit();
        try (ResultSet rs = s.executeQuery("SELECT count(*) FROM documents")) {
          rs.next();
          assertThat(rs.getLong(1)).isZero();
        }
        c.commit();
      }
    }
  }

  @Test
  @DisplayName("as tenant B, updates and deletes of A's rows touch nothing, and rows written under A's id are refused")
  void otherTenantsRowsAreUnwritable() throws SQLException {
    try (Connection c = gateway.database().appJdbc()) {
      c.setAutoCommit(false);
      try (Statement s = c.createStatement()) {
        s.execute(Database.setTenant(b.id()));
        assertThat(s.executeUpdate("UPDATE documents SET title = 'stolen' WHERE tenant_id = '" + a.id() + "'")).isZero();
        assertThat(s.executeUpdate("DELETE FROM chunks WHERE tenant_id = '" + a.id() + "'")).isZero();
        assertThat(s.executeUpdate("DELETE FROM api_keys")).as("B's own key only").isEqualTo(1);
        c.rollback();
        s.execute(Database.setTenant(b.id()));
        try (PreparedStatement p = c.prepareStatement(
            "INSERT INTO token_usage (tenant_id, day, tokens) VALUES (?, current_date, 1)")) {
          p.setObject(1, a.id());
          assertThatThrownBy(p::executeUpdate).hasMessageContaining("row-level security");
        }
      } finally {
        c.rollback();
      }
    }
    assertThat(visibleRowsOf("documents", a.id(), a.id())).isEqualTo(2);
  }

  @Test
  @DisplayName("the tables' owner is held to the policies too (FORCE), unless it opts in to every tenant")
  void ownerIsFencedToo() throws SQLException {
    var config = gateway.database().config();
    try (Connection c = java.sql.DriverManager.getConnection(config.jdbcUrl(), config.pgUser(), config.pgPassword());
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT count(*) FROM documents")) {
      rs.next();
      assertThat(rs.getLong(1)).isZero();
    }
    try (Connection c = gateway.database().appJdbc(); Statement s = c.createStatement()) {
      s.execute("SET quarry.all_tenants = on");
      try (ResultSet rs = s.executeQuery("SELECT count(*) FROM documents")) {
        rs.next();
        assertThat(rs.getLong(1)).as("the app role cannot opt in").isZero();
      }
    }
  }
}
