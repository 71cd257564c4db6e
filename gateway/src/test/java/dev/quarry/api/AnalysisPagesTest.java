package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.agent.AnalysisEvent;
import dev.quarry.agent.AnalysisStore;
import dev.quarry.store.Database;
import dev.quarry.tenancy.Tenants;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.sqlclient.Pool;
import java.sql.Connection;
import java.sql.Statement;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The analyses' listing, an analysis' record with its steps and a finished analysis' events, written
 * a page at a time (each page bounded in rows and bytes), are byte for byte what the whole reads
 * encoded before, over records large enough to take many pages.
 */
@DisplayName("Analyses' listings, records and replays are written a page at a time, as before")
class AnalysisPagesTest {
  private static TestGateway gateway;
  private static Pool pool;
  private static AnalysisStore store;
  private static UUID stepped;

  /** Text of about {@code chars} characters that JSON escapes and UTF-8 encodes in several widths. */
  private static String text(String seed, int chars) {
    return ("'" + seed + " é € 🦆 \"q\" \\\\ ' || repeat('x é\t', " + Math.max(1, chars / 4) + ")");
  }

  @BeforeAll
  static void start() throws Exception {
    gateway = TestGateway.start();
    pool = Database.pool(gateway.vertx(), gateway.config(), 1);
    store = new AnalysisStore(pool);
    UUID tenant = Tenants.DEFAULT;
    stepped = UUID.randomUUID();
    try (Connection c = gateway.database().jdbc(); Statement s = c.createStatement()) {
      // 130 analyses, created at 7 instants (ties broken by id), every tenth with 100 KB of program output.
      s.execute("INSERT INTO analyses (id, tenant_id, question, scope, preload, budgets, model, status, answer,"
          + " program, citations, usage, program_output, created_at, finished_at, error_type, error_message)"
          + " SELECT gen_random_uuid(), '" + tenant + "', 'Question ' || g || ' é', '{}', '{}', '{\"model_turns\": 3}',"
          + " 'm', 'succeeded', " + text("answer", 200) + ", 'print(' || g || ')', '[{\"ref\": \"a\"}]',"
          + " '{\"tokens\": 5}', CASE WHEN g % 10 = 0 THEN " + text("out", 100_000) + " END,"
          + " now() - (g % 7) * interval '1 minute', now(), CASE WHEN g % 13 = 0 THEN 'Boom' END,"
          + " CASE WHEN g % 13 = 0 THEN 'it broke' END FROM generate_series(1, 130) g");
      s.execute("INSERT INTO analyses (id, tenant_id, question, scope, preload, budgets, model, status, created_at)"
          + " VALUES ('" + stepped + "', '" + tenant + "', 'Stepped', '{}', '{}', '{}', 'm', 'succeeded',"
          + " now() - interval '1 day')");
      // 40 steps, some with 60 KB of output; 300 events, some of 60 KB.
      s.execute("INSERT INTO analysis_steps (tenant_id, analysis_id, ordinal, code, result, started_at, duration_ms)"
          + " SELECT '" + tenant + "', '" + stepped + "', g, 'print(' || g || ')', jsonb_build_object('output', "
          + " CASE WHEN g % 3 = 0 THEN " + text("step", 60_000) + " ELSE 'small é' END, 'ok', true), now(), g"
          + " FROM generate_series(1, 40) g");
      s.execute("INSERT INTO analysis_events (tenant_id, analysis_id, seq, type, body) SELECT '" + tenant + "', '"
          + stepped + "', g, 'output', json_build_object('text', CASE WHEN g % 11 = 0 THEN " + text("ev", 60_000)
          + " ELSE 'line ' || g || ' é' END)::text FROM generate_series(1, 300) g");
    }
  }

  @AfterAll
  static void stop() throws Exception {
    pool.close().await();
    gateway.close();
  }

  @Test
  @DisplayName("GET /v1/analyses?limit= is what the whole listing encoded, for every limit shape")
  void listing() {
    for (int limit : List.of(1, 7, 50, 51, 131, 500)) {
      HttpResponse<Buffer> r = gateway.client().get("/v1/analyses?limit=" + limit).send().await();
      assertThat(r.statusCode()).isEqualTo(200);
      String expected = new JsonObject().put("analyses", new JsonArray(store.list(Tenants.DEFAULT, limit).await())).encode();
      assertThat(r.bodyAsString()).as("limit " + limit).isEqualTo(expected);
    }
  }

  @Test
  @DisplayName("GET /v1/analyses/{id} is what the whole record with its steps encoded")
  void record() {
    HttpResponse<Buffer> r = gateway.client().get("/v1/analyses/" + stepped).send().await();
    assertThat(r.statusCode()).isEqualTo(200);
    JsonObject whole = store.get(Tenants.DEFAULT, stepped).await().orElseThrow();
    assertThat(whole.getJsonArray("steps")).hasSize(40);
    assertThat(r.bodyAsString()).isEqualTo(whole.encode());
    assertThat(gateway.client().get("/v1/analyses/" + UUID.randomUUID()).send().await().statusCode()).isEqualTo(404);
  }

  @Test
  @DisplayName("a finished analysis' events, replayed in pages bounded in bytes, are every stored event in order,"
      + " from the first and after a Last-Event-ID")
  void replay() {
    for (long after : List.of(0L, 150L, 299L, 300L)) {
      HttpResponse<Buffer> r = gateway.client().get("/v1/analyses/" + stepped + "/events")
          .putHeader("Last-Event-ID", Long.toString(after)).send().await();
      assertThat(r.statusCode()).isEqualTo(200);
      StringBuilder expected = new StringBuilder();
      for (AnalysisEvent e : store.events(Tenants.DEFAULT, stepped, after).await()) {
        expected.append(e.sse());
      }
      assertThat(r.body() == null ? "" : r.bodyAsString()).as("after " + after).isEqualTo(expected.toString());
    }
    // A page is bounded in bytes: it ends with the event that reaches the bound, well before its 200 events.
    List<AnalysisEvent> page = store.events(Tenants.DEFAULT, stepped, 0, AnalysisRoutes.REPLAY_PAGE,
        AnalysisRoutes.REPLAY_PAGE_BYTES).await();
    assertThat(page).hasSizeLessThan(AnalysisRoutes.REPLAY_PAGE);
    long before = page.subList(0, page.size() - 1).stream().mapToLong(e -> AnalysisRoutes.utf8Length(e.json())).sum();
    assertThat(before).isLessThan(AnalysisRoutes.REPLAY_PAGE_BYTES);
    assertThat(before + AnalysisRoutes.utf8Length(page.get(page.size() - 1).json()))
        .isGreaterThanOrEqualTo(AnalysisRoutes.REPLAY_PAGE_BYTES);
  }
}
