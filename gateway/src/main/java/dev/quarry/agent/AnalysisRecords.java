package dev.quarry.agent;

import dev.quarry.store.Database;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * The statements of durable analyses (V21): who holds a running analysis, taking over the ones
 * whose replica is gone or handed them off, and reading an analysis' record for its rebuild. Each
 * statement about one analysis filters by its tenant; the take-over crosses tenants through the
 * owner's function {@code take_over_analyses}.
 */
final class AnalysisRecords {
  static final String TAKE_OVER = "SELECT tenant_id, analysis_id FROM take_over_analyses($1, $2)";
  static final String HAND_OFF = "UPDATE analyses SET replica_id = NULL WHERE tenant_id = $1 AND id = $2"
      + " AND replica_id = $3 AND status = 'running'";
  static final String REQUEST_CANCEL = "UPDATE analyses SET cancel_requested = true WHERE tenant_id = $1 AND id = $2"
      + " AND status = 'running'";
  static final String SET_DEADLINE = "UPDATE analyses SET deadline_at = $3 WHERE tenant_id = $1 AND id = $2";
  static final String INSERT_CALLBACKS = "INSERT INTO analysis_callbacks (tenant_id, analysis_id, step, ordinal,"
      + " kind, digest, outcome, usage) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";

  private static final String ANALYSIS = "SELECT question, scope, budgets, preload, follows, moves, deadline_at, cancel_requested FROM analyses"
      + " WHERE tenant_id = $1 AND id = $2";
  private static final String EVENTS = "SELECT seq, type, body FROM analysis_events WHERE tenant_id = $1"
      + " AND analysis_id = $2 AND type IN ('started', 'model_turn', 'code', 'cell_result', 'answer', 'failed') ORDER BY seq";
  private static final String OUTPUT_SENT = "SELECT (body::jsonb->>'step')::int AS step, body::jsonb->>'channel' AS channel,"
      + " sum(char_length(body::jsonb->>'text')) AS chars FROM analysis_events WHERE tenant_id = $1 AND analysis_id = $2"
      + " AND type = 'output' GROUP BY 1, 2";
  private static final String CALLBACKS_SENT = "SELECT (body::jsonb->>'step')::int AS step, count(*) AS n"
      + " FROM analysis_events WHERE tenant_id = $1 AND analysis_id = $2 AND type = 'callback' GROUP BY 1";
  private static final String LAST_EVENT = "SELECT seq, body::jsonb->>'at' AS at, (SELECT coalesce(sum(length(e.body)), 0)"
      + " FROM analysis_events e WHERE e.tenant_id = $1 AND e.analysis_id = $2) AS chars FROM analysis_events"
      + " WHERE tenant_id = $1 AND analysis_id = $2 ORDER BY seq DESC LIMIT 1";
  private static final String CALLBACKS = "SELECT step, ordinal, kind, digest, outcome, usage FROM analysis_callbacks"
      + " WHERE tenant_id = $1 AND analysis_id = $2 ORDER BY step, ordinal";

  /** A running analysis taken over: whose it is. */
  record Taken(UUID tenantId, UUID id) {}

  private final Pool pool;

  AnalysisRecords(Pool pool) {
    this.pool = pool;
  }

  /** The request a record's {@code started} event and preload describe (its scope, budgets, words). */
  static AnalysisRequest request(AnalysisRecord r) {
    JsonObject started = r.started();
    java.util.Set<UUID> scope = new java.util.HashSet<>();
    started.getJsonArray("document_ids", new io.vertx.core.json.JsonArray()).forEach(d -> scope.add(UUID.fromString((String) d)));
    List<AnalysisRequest.Turn> conversation = new ArrayList<>();
    started.getJsonArray("conversation", new io.vertx.core.json.JsonArray()).forEach(t -> {
      JsonObject turn = (JsonObject) t;
      conversation.add(new AnalysisRequest.Turn(turn.getString("role"), turn.getString("text")));
    });
    return new AnalysisRequest(started.getString("question", ""), new dev.quarry.sandbox.Scope(scope), r.preload(),
        Budgets.fromJson(started.getJsonObject("budgets", new JsonObject())), conversation,
        started.getString("instructions", ""));
  }

  /** Takes over up to {@code most} analyses that no live replica holds, for {@code replica}. */
  Future<List<Taken>> takeOver(UUID replica, int most) {
    return pool.preparedQuery(TAKE_OVER).execute(Tuple.of(replica, most)).map(rows -> {
      List<Taken> out = new ArrayList<>();
      rows.forEach(r -> out.add(new Taken(r.getUUID("tenant_id"), r.getUUID("analysis_id"))));
      return out;
    });
  }

  /** Lets go of a running analysis this replica holds, for another to take over at once. */
  Future<Boolean> handOff(UUID tenantId, UUID id, UUID replica) {
    return Database.inTenant(pool, tenantId, conn -> conn.preparedQuery(HAND_OFF).execute(Tuple.of(tenantId, id, replica)))
        .map(rows -> rows.rowCount() > 0);
  }

  /** Notes a cancel asked while no replica may hold the analysis: whoever takes it over ends it. */
  Future<Void> requestCancel(UUID tenantId, UUID id) {
    return Database.inTenant(pool, tenantId, conn -> conn.preparedQuery(REQUEST_CANCEL).execute(Tuple.of(tenantId, id)))
        .mapEmpty();
  }

  Future<Void> deadline(UUID tenantId, UUID id, Instant deadline) {
    return Database.inTenant(pool, tenantId, conn -> conn.preparedQuery(SET_DEADLINE)
        .execute(Tuple.of(tenantId, id, OffsetDateTime.ofInstant(deadline, java.time.ZoneOffset.UTC)))).mapEmpty();
  }

  /** Writes callback records in the transaction of an analysis' progress (before the step that ends their cell). */
  static Future<?> insertCallbacks(SqlConnection conn, UUID tenantId, UUID analysisId, List<CallbackRecord> records) {
    List<Tuple> rows = records.stream().map(r -> AnalysisStore.withoutNul(Tuple.of(tenantId, analysisId, r.step(),
        r.ordinal(), r.kind(), r.digest(), r.outcome().encode(), r.usage()))).toList();
    return conn.preparedQuery(INSERT_CALLBACKS).executeBatch(rows);
  }

  /** The analysis' record as a rebuild needs it; empty when the tenant has no such analysis. */
  Future<Optional<AnalysisRecord>> load(UUID tenantId, UUID id) {
    Tuple key = Tuple.of(tenantId, id);
    return Database.inTenant(pool, tenantId, conn -> conn.preparedQuery(ANALYSIS).execute(key).compose(found -> {
      if (found.size() == 0) {
        return Future.succeededFuture(Optional.<AnalysisRecord>empty());
      }
      Row a = found.iterator().next();
      Builder b = new Builder(id, tenantId, a);
      return conn.preparedQuery(EVENTS).execute(key).onSuccess(b::events)
          .compose(v -> conn.preparedQuery(OUTPUT_SENT).execute(key)).onSuccess(b::output)
          .compose(v -> conn.preparedQuery(CALLBACKS_SENT).execute(key)).onSuccess(b::callbackEvents)
          .compose(v -> conn.preparedQuery(LAST_EVENT).execute(key)).onSuccess(b::last)
          .compose(v -> conn.preparedQuery(CALLBACKS).execute(key)).onSuccess(b::callbacks)
          .map(v -> Optional.of(b.build()));
    }));
  }

  private static final class Builder {
    final UUID id;
    final UUID tenantId;
    final List<UUID> preload;
    final UUID follows;
    final int moves;
    final Instant deadlineAt;
    final boolean cancelRequested;
    /** What the row says was asked: the record's {@code started} event when none was stored. */
    final JsonObject asked;
    JsonObject started;
    final List<ModelTurn> turns = new ArrayList<>();
    final Map<Integer, String> codes = new HashMap<>();
    final Map<Integer, JsonObject> results = new HashMap<>();
    final List<CallbackRecord> callbacks = new ArrayList<>();
    final Map<Integer, Map<String, Long>> output = new HashMap<>();
    final Map<Integer, Integer> callbackEvents = new HashMap<>();
    long lastSeq;
    long storedChars;
    Instant lastAt;
    boolean terminal;

    Builder(UUID id, UUID tenantId, Row a) {
      this.id = id;
      this.tenantId = tenantId;
      UUID[] p = a.getArrayOfUUIDs("preload");
      this.preload = p == null ? List.of() : Arrays.asList(p);
      this.follows = a.getUUID("follows");
      this.moves = a.getInteger("moves");
      OffsetDateTime d = a.getOffsetDateTime("deadline_at");
      this.deadlineAt = d == null ? null : d.toInstant();
      this.cancelRequested = Boolean.TRUE.equals(a.getBoolean("cancel_requested"));
      io.vertx.core.json.JsonArray scope = new io.vertx.core.json.JsonArray();
      UUID[] ids = a.getArrayOfUUIDs("scope");
      if (ids != null) {
        Arrays.stream(ids).map(UUID::toString).sorted().forEach(scope::add);
      }
      this.asked = new JsonObject().put("question", a.getString("question")).put("document_ids", scope)
          .put("budgets", (JsonObject) a.getValue("budgets"));
    }

    void events(io.vertx.sqlclient.RowSet<Row> rows) {
      for (Row r : rows) {
        JsonObject body = new JsonObject(r.getString("body"));
        switch (r.getString("type")) {
          case AnalysisEvent.STARTED -> started = body;
          case AnalysisEvent.MODEL_TURN -> turns.add(ModelTurn.ofEvent(body));
          case AnalysisEvent.CODE -> codes.put(body.getInteger("step"), body.getString("code"));
          // The result as the model was given it (the event's text keeps its keys' order; jsonb would not).
          case AnalysisEvent.CELL_RESULT -> results.put(body.getInteger("step"), body.getJsonObject("result"));
          default -> terminal = true;
        }
      }
    }

    void output(io.vertx.sqlclient.RowSet<Row> rows) {
      rows.forEach(r -> output.computeIfAbsent(r.getInteger("step"), s -> new HashMap<>())
          .put(r.getString("channel"), r.getLong("chars")));
    }

    void callbackEvents(io.vertx.sqlclient.RowSet<Row> rows) {
      rows.forEach(r -> callbackEvents.put(r.getInteger("step"), r.getLong("n").intValue()));
    }

    void last(io.vertx.sqlclient.RowSet<Row> rows) {
      rows.forEach(r -> {
        lastSeq = r.getLong("seq");
        storedChars = r.getLong("chars");
        lastAt = r.getString("at") == null ? null : Instant.parse(r.getString("at"));
      });
    }

    void callbacks(io.vertx.sqlclient.RowSet<Row> rows) {
      rows.forEach(r -> callbacks.add(new CallbackRecord(r.getInteger("step"), r.getInteger("ordinal"),
          r.getString("kind"), r.getString("digest"), new JsonObject(r.getString("outcome")),
          (JsonObject) r.getValue("usage"))));
    }

    AnalysisRecord build() {
      Map<Integer, AnalysisRecord.Sent> sent = new HashMap<>();
      java.util.Set<Integer> steps = new java.util.HashSet<>(output.keySet());
      steps.addAll(callbackEvents.keySet());
      for (Integer s : steps) {
        sent.put(s, new AnalysisRecord.Sent(output.getOrDefault(s, Map.of()), callbackEvents.getOrDefault(s, 0)));
      }
      // Its replica died before its first event was stored (within the first batch's 50 ms): the row
      // says what was asked (a chat client's earlier turns and instructions, only in the event, are lost).
      return new AnalysisRecord(id, tenantId, started == null ? asked : started, preload, follows, moves, turns, codes, results,
          AnalysisRecord.byStep(callbacks), sent, lastSeq, storedChars, lastAt, deadlineAt, terminal, cancelRequested);
    }
  }
}
