package dev.quarry.agent;

import dev.quarry.store.Database;
import dev.quarry.store.DatabaseUnavailable;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * Every statement about analyses, in one place. Each filters by {@code tenant_id}: a statement that
 * forgot it would show one tenant's questions to another.
 */
public final class AnalysisStore {
  static final String INSERT_ANALYSIS = "INSERT INTO analyses (id, tenant_id, question, scope, preload,"
      + " budgets, model, status, replica_id, deadline_at, follows) VALUES ($1, $2, $3, $4, $5, $6, $7, 'running', $8,"
      + " now() + make_interval(secs => $9), $10)";

  static final String UPDATE_USAGE = "UPDATE analyses SET usage = $3 WHERE tenant_id = $1 AND id = $2";

  static final String FINISH = "UPDATE analyses SET status = $3, error_type = $4, error_message = $5,"
      + " answer = $6, program = $7, citations = $8, usage = $9, finished_at = now()"
      + " WHERE tenant_id = $1 AND id = $2 AND ($10::uuid IS NULL OR replica_id = $10)";

  /** Whether the analysis is still held by $3 (the row is share-locked: no replica takes it over meanwhile). */
  static final String HELD_BY = "SELECT replica_id = $3 AS held FROM analyses WHERE tenant_id = $1 AND id = $2 FOR SHARE";

  /**
   * A write of an analysis that another replica has taken over (this one's lease lapsed while it still
   * ran: a pause, a partition): refused, so that two replicas never both write one record.
   */
  /**
   * What {@link #HELD_BY} answered, as a write's go-ahead: held by the writer, or no row (its tenant
   * is being deleted: the write fails or not as it did before holders); else {@link LostHold}.
   */
  private static Future<Void> stillHeld(RowSet<Row> rows, UUID id) {
    return rows.size() == 0 || Boolean.TRUE.equals(rows.iterator().next().getBoolean("held"))
        ? Future.succeededFuture() : Future.failedFuture(new LostHold(id));
  }

  static final class LostHold extends RuntimeException {
    LostHold(UUID id) {
      super("analysis " + id + " is held by another replica now (this replica's lease lapsed while it ran it)",
          null, false, false);
    }
  }

  static final String INSERT_STEP = "INSERT INTO analysis_steps (tenant_id, analysis_id, ordinal, code,"
      + " result, started_at, duration_ms) VALUES ($1, $2, $3, $4, $5, $6, $7)";

  static final String INSERT_EVENTS = "INSERT INTO analysis_events (tenant_id, analysis_id, seq, type, body)"
      + " SELECT $1, $2, e.seq, e.type, e.body FROM unnest($3::bigint[], $4::text[], $5::text[]) AS e(seq, type, body)";

  private static final String COLUMNS = "id, question, scope, preload, budgets, model, status, error_type,"
      + " error_message, answer, program, citations, usage, program_output, created_at, finished_at, follows, moves";

  static final String GET_ANALYSIS = "SELECT " + COLUMNS + " FROM analyses WHERE tenant_id = $1 AND id = $2";

  static final String LIST_ANALYSES = "SELECT " + COLUMNS + " FROM analyses WHERE tenant_id = $1"
      + " ORDER BY created_at DESC, id LIMIT $2";

  /** Bytes of an analysis' text, from the values' headers (a listing's page is bounded by them). */
  private static final String ANALYSIS_BYTES = "(octet_length(question) + coalesce(octet_length(answer), 0)"
      + " + coalesce(octet_length(program), 0) + coalesce(octet_length(program_output), 0)"
      + " + coalesce(octet_length(error_message), 0) + coalesce(pg_column_size(citations), 0))";

  /**
   * Up to $2 of the tenant's analyses, newest first, after the one created at $4 with id $5 (from
   * the first when $4 is null), and no more than the first whose text adds up to $3 bytes; each row
   * says how many the limit let through ({@code fetched}), so that a page cut short by the bytes is
   * told from the last one.
   */
  static final String PAGE_ANALYSES = "WITH page AS (SELECT " + COLUMNS + ", sum(" + ANALYSIS_BYTES + ")"
      + " OVER (ORDER BY created_at DESC, id) - " + ANALYSIS_BYTES + " AS before FROM analyses"
      + " WHERE tenant_id = $1 AND ($4::timestamptz IS NULL OR created_at < $4 OR (created_at = $4 AND id > $5))"
      + " ORDER BY created_at DESC, id LIMIT $2)"
      + " SELECT *, (SELECT count(*) FROM page) AS fetched FROM page WHERE before < $3 ORDER BY created_at DESC, id";

  /** As {@link #PAGE_ANALYSES}, for an analysis' steps after ordinal $3, up to $4 of them and $5 bytes. */
  static final String PAGE_STEPS = "WITH page AS (SELECT ordinal, code, result, started_at, duration_ms,"
      + " sum(octet_length(code) + octet_length(result::text)) OVER (ORDER BY ordinal)"
      + " - octet_length(code) - octet_length(result::text) AS before FROM analysis_steps"
      + " WHERE tenant_id = $1 AND analysis_id = $2 AND ordinal > $3 ORDER BY ordinal LIMIT $4)"
      + " SELECT *, (SELECT count(*) FROM page) AS fetched FROM page WHERE before < $5 ORDER BY ordinal";

  static final String LIST_STEPS = "SELECT ordinal, code, result, started_at, duration_ms FROM analysis_steps"
      + " WHERE tenant_id = $1 AND analysis_id = $2 ORDER BY ordinal";

  static final String LIST_EVENTS = "SELECT seq, type, body FROM analysis_events"
      + " WHERE tenant_id = $1 AND analysis_id = $2 AND seq > $3 ORDER BY seq";
  /**
   * Up to $4 events after $3, cut after the one that brings their bodies to $5 bytes: a page of a
   * replay is bounded in bytes, not only in events (an event may hold a cell's whole output). The
   * bodies' sizes come from their headers (octet_length does not read a stored value).
   */
  static final String PAGE_EVENTS = "SELECT seq, type, body FROM (SELECT seq, type, body,"
      + " sum(octet_length(body)) OVER (ORDER BY seq) - octet_length(body) AS before FROM analysis_events"
      + " WHERE tenant_id = $1 AND analysis_id = $2 AND seq > $3 ORDER BY seq LIMIT $4) page"
      + " WHERE before < $5 ORDER BY seq";

  /**
   * Whether the analysis runs, and, once it has ended, whether it ended more than $3 seconds ago
   * (by the database's clock; a record ended without a time, as is): then whatever of its events is
   * stored is all there will be.
   */
  static final String PROGRESS = "SELECT status, status <> 'running' AND (finished_at IS NULL"
      + " OR finished_at < now() - make_interval(secs => $3)) AS settled FROM analyses WHERE tenant_id = $1 AND id = $2";

  static final String SET_PROGRAM_OUTPUT = "UPDATE analyses SET program_output = $3"
      + " WHERE tenant_id = $1 AND id = $2 AND program_output IS NULL";

  /** Documents of the tenant changed (or created) since a moment, optionally among some ids. */
  static final String CHANGED_DOCUMENTS = "SELECT id, title, version, updated_at FROM documents"
      + " WHERE tenant_id = $1 AND updated_at > $2 AND (cardinality($3::uuid[]) = 0 OR id = ANY($3))"
      + " ORDER BY updated_at";

  static final String EXISTING_DOCUMENTS = "SELECT id FROM documents WHERE tenant_id = $1 AND id = ANY($2)";

  static final String DESCRIBE_DOCUMENTS = "SELECT id, title, uri FROM documents WHERE tenant_id = $1"
      + " AND id = ANY($2)";

  private final Pool pool;

  public AnalysisStore(Pool pool) {
    this.pool = pool;
  }

  static final String ANSWERED_WITH = "SELECT id FROM analyses WHERE tenant_id = $1 AND status = 'succeeded'"
      + " AND md5(answer) = md5($2) AND answer = $2 ORDER BY created_at DESC LIMIT 1";

  /** The tenant's latest answered analysis whose answer is exactly {@code answer}, if any. */
  public Future<Optional<UUID>> answeredWith(UUID tenantId, String answer) {
    return run(tenantId, ANSWERED_WITH, Tuple.of(tenantId, answer))
        .map(rows -> rows.size() == 0 ? Optional.<UUID>empty() : Optional.of(rows.iterator().next().getUUID("id")));
  }

  Pool pool() {
    return pool;
  }

  /** Sends a notification to every replica (AnalysisService's cancels). */
  Future<Void> announce(String channel, String payload) {
    return dev.quarry.store.Notifications.publish(pool, channel, payload);
  }

  /**
   * Records a new analysis as running, held by {@code replica}, its deadline its wall time from now;
   * {@code follows} is the analysis whose question it follows up (null for a first question).
   */
  Future<Void> insert(UUID tenantId, UUID id, String question, List<UUID> scope, List<UUID> preload,
      Budgets budgets, String model, UUID replica, UUID follows) {
    return run(tenantId, INSERT_ANALYSIS, Tuple.tuple().addValue(id).addValue(tenantId).addValue(question)
            .addValue(scope.toArray(UUID[]::new)).addValue(preload.toArray(UUID[]::new)).addValue(budgets.toJson())
            .addValue(model).addValue(replica).addValue(budgets.wallTimeMs() / 1000.0).addValue(follows))
        .mapEmpty();
  }

  Future<Void> finish(UUID tenantId, UUID id, UUID holder, Outcome outcome) {
    return run(tenantId, FINISH, Tuple.tuple().addValue(tenantId).addValue(id)
            .addValue(outcome.status()).addValue(outcome.errorType()).addValue(outcome.errorMessage())
            .addValue(outcome.answer()).addValue(outcome.program()).addValue(outcome.citations())
            .addValue(outcome.usage()).addValue(holder))
        .compose(rows -> rows.rowCount() > 0 || holder == null ? Future.<Void>succeededFuture()
            // Not updated: held by another replica now (LostHold), or gone (its tenant deleted), as before.
            : run(tenantId, HELD_BY, Tuple.of(tenantId, id, holder)).compose(held -> stillHeld(held, id)));
  }

  /**
   * Records how the analysis ended, trying again while the database is out of reach (a restart, a
   * failover), with back-off, for up to {@link #END_RETRY}: an analysis that ends while PostgreSQL
   * restarts must not stay "running" in its record. Blocks: call it from the analysis' own
   * (virtual) thread.
   */
  void finishDurably(UUID tenantId, UUID id, UUID holder, Outcome outcome) {
    retry(() -> finish(tenantId, id, holder, outcome));
  }

  /** How long a write of an analysis keeps being tried while the database is unreachable. */
  static final Duration END_RETRY = Duration.ofSeconds(90);

  /**
   * The write, tried again while the database is unreachable, on a virtual thread of its own so that
   * the caller's event loop never waits: the steps and events of an analysis that runs through a
   * database restart are kept, in order (each analysis has one event write in flight at a time).
   */
  private static Future<Void> durably(Supplier<Future<Void>> write) {
    return write.get().recover(first -> {
      if (!DatabaseUnavailable.matches(first)) {
        return Future.failedFuture(first);
      }
      Promise<Void> done = Promise.promise();
      Thread.ofVirtual().name("analysis-write-retry").start(() -> {
        try {
          retry(write);
          done.complete();
        } catch (RuntimeException e) {
          done.fail(e);
        }
      });
      return done.future();
    });
  }

  /** Runs the write until it succeeds, fails otherwise than by an unreachable database, or {@link #END_RETRY} passes. */
  private static void retry(Supplier<Future<Void>> write) {
    long deadline = System.nanoTime() + END_RETRY.toNanos();
    long backoffMs = 100;
    while (true) {
      try {
        write.get().await();
        return;
      } catch (Exception e) {
        // Exception: await() rethrows checked causes as they are (a socket reset).
        if (!DatabaseUnavailable.matches(e) || System.nanoTime() + backoffMs * 1_000_000 > deadline) {
          throw e instanceof RuntimeException r ? r : new IllegalStateException(e);
        }
      }
      try {
        Thread.sleep(backoffMs);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while retrying a write", e);
      }
      backoffMs = Math.min(backoffMs * 2, 5_000);
    }
  }

  /** How an analysis ended, as stored. */
  record Outcome(String status, String errorType, String errorMessage, String answer, String program,
      JsonArray citations, JsonObject usage) {}

  /** A finished step, as stored. */
  record StepRecord(int ordinal, String code, JsonObject result, OffsetDateTime startedAt, long durationMs) {}

  /**
   * What an analysis did since its last write, in one transaction: its events, the steps that
   * ended and its usage so far (each part may be empty), and the announcement of the events to
   * every replica ({@link EventWakeups}). While the database is unreachable, tried again until
   * {@link #END_RETRY}.
   */
  Future<Void> progress(UUID tenantId, UUID analysisId, UUID holder, List<AnalysisEvent> events,
      List<CallbackRecord> callbacks, List<StepRecord> steps, JsonObject usage) {
    return durably(() -> Database.<Void>inTenant(pool, tenantId, conn -> {
      Future<?> done = holder == null ? Future.succeededFuture()
          : conn.preparedQuery(HELD_BY).execute(Tuple.of(tenantId, analysisId, holder))
              .compose(rows -> stillHeld(rows, analysisId));
      if (!events.isEmpty()) {
        // Announced in the same transaction: followers on other replicas hear it when it is visible.
        String stored = EventWakeups.payload(analysisId, events.get(events.size() - 1).seq());
        done = done.compose(v -> conn.preparedQuery(INSERT_EVENTS).execute(withoutNul(eventsTuple(tenantId, analysisId, events))))
            .compose(v -> dev.quarry.store.Notifications.publish(conn, EventWakeups.CHANNEL, stored));
      }
      if (!callbacks.isEmpty()) {
        // Before the steps: a step stored has every callback of its cell stored with it or before.
        done = done.compose(v -> AnalysisRecords.insertCallbacks(conn, tenantId, analysisId, callbacks));
      }
      if (!steps.isEmpty()) {
        List<Tuple> rows = steps.stream().map(st -> withoutNul(Tuple.of(tenantId, analysisId, st.ordinal(),
            st.code(), st.result(), st.startedAt(), st.durationMs()))).toList();
        done = done.compose(v -> conn.preparedQuery(INSERT_STEP).executeBatch(rows));
      }
      if (usage != null) {
        done = done.compose(v -> conn.preparedQuery(UPDATE_USAGE).execute(Tuple.of(tenantId, analysisId, usage)));
      }
      return done.mapEmpty();
    }));
  }

  private static Tuple eventsTuple(UUID tenantId, UUID analysisId, List<AnalysisEvent> events) {
    Long[] seqs = events.stream().map(AnalysisEvent::seq).toArray(Long[]::new);
    String[] types = events.stream().map(AnalysisEvent::type).toArray(String[]::new);
    String[] bodies = events.stream().map(AnalysisEvent::json).toArray(String[]::new);
    return Tuple.of(tenantId, analysisId, seqs, types, bodies);
  }

  /** The analysis with its steps, as the API shows it. */
  public Future<Optional<JsonObject>> get(UUID tenantId, UUID id) {
    return record(tenantId, id).compose(found -> {
      if (found.isEmpty()) {
        return Future.succeededFuture(Optional.empty());
      }
      return run(tenantId, LIST_STEPS, Tuple.of(tenantId, id)).map(steps -> {
        JsonArray out = new JsonArray();
        steps.forEach(s -> out.add(stepJson(s)));
        return Optional.of(found.get().put("steps", out));
      });
    });
  }

  /** The analysis as the API shows it, without its steps; empty when the tenant has no such one. */
  public Future<Optional<JsonObject>> record(UUID tenantId, UUID id) {
    return run(tenantId, GET_ANALYSIS, Tuple.of(tenantId, id))
        .map(rows -> rows.size() == 0 ? Optional.empty() : Optional.of(toJson(rows.iterator().next())));
  }

  /** A page of something listed in order: its items, and where the next starts (null after the last). */
  public record Page<P>(List<JsonObject> items, P next) {}

  /** A place in the listing of analyses (newest first, then by id), just after one that was listed. */
  public record Position(OffsetDateTime createdAt, UUID id) {}

  /**
   * Up to {@code limit} of the tenant's analyses without their steps, newest first, after {@code
   * after} (from the newest when null), and no more than the first whose text reaches {@code maxBytes}.
   */
  public Future<Page<Position>> page(UUID tenantId, Position after, int limit, long maxBytes) {
    return run(tenantId, PAGE_ANALYSES, Tuple.of(tenantId, limit, maxBytes,
            after == null ? null : after.createdAt(), after == null ? null : after.id()))
        .map(rows -> {
          List<JsonObject> out = new ArrayList<>();
          long fetched = 0;
          Position last = null;
          for (Row r : rows) {
            out.add(toJson(r));
            fetched = r.getLong("fetched");
            last = new Position(r.getOffsetDateTime("created_at"), r.getUUID("id"));
          }
          return new Page<>(out, out.size() < fetched || fetched == limit ? last : null);
        });
  }

  /** As {@link #page}, for an analysis' steps after ordinal {@code after} (0: from the first). */
  public Future<Page<Integer>> steps(UUID tenantId, UUID id, int after, int limit, long maxBytes) {
    return run(tenantId, PAGE_STEPS, Tuple.of(tenantId, id, after, limit, maxBytes)).map(rows -> {
      List<JsonObject> out = new ArrayList<>();
      long fetched = 0;
      Integer last = null;
      for (Row r : rows) {
        out.add(stepJson(r));
        fetched = r.getLong("fetched");
        last = r.getInteger("ordinal");
      }
      return new Page<>(out, out.size() < fetched || fetched == limit ? last : null);
    });
  }

  private static JsonObject stepJson(Row s) {
    return new JsonObject()
        .put("step", s.getInteger("ordinal"))
        .put("code", s.getString("code"))
        .put("result", s.getJsonObject("result"))
        .put("started_at", s.getOffsetDateTime("started_at").toInstant().toString())
        .put("duration_ms", s.getLong("duration_ms"));
  }

  /** The tenant's latest analyses, without their steps. */
  public Future<List<JsonObject>> list(UUID tenantId, int limit) {
    return run(tenantId, LIST_ANALYSES, Tuple.of(tenantId, limit)).map(rows -> {
      List<JsonObject> out = new ArrayList<>();
      rows.forEach(r -> out.add(toJson(r)));
      return out;
    });
  }

  public Future<List<AnalysisEvent>> events(UUID tenantId, UUID id, long afterSeq) {
    return run(tenantId, LIST_EVENTS, Tuple.of(tenantId, id, afterSeq)).map(rows -> {
      List<AnalysisEvent> out = new ArrayList<>();
      rows.forEach(r -> out.add(new AnalysisEvent(r.getLong("seq"), r.getString("type"), r.getString("body"))));
      return out;
    });
  }

  /**
   * At most {@code limit} events after {@code afterSeq}, in order, and no more than the first whose
   * bodies add up to {@code maxBytes}: one page of a replay. It is the last page when it has fewer
   * than {@code limit} events and fewer than {@code maxBytes} bytes.
   */
  public Future<List<AnalysisEvent>> events(UUID tenantId, UUID id, long afterSeq, int limit, long maxBytes) {
    return run(tenantId, PAGE_EVENTS, Tuple.of(tenantId, id, afterSeq, limit, maxBytes)).map(rows -> {
      List<AnalysisEvent> out = new ArrayList<>();
      rows.forEach(r -> out.add(new AnalysisEvent(r.getLong("seq"), r.getString("type"), r.getString("body"))));
      return out;
    });
  }

  /**
   * Where an analysis stands: its status, and whether it ended longer than {@code settledAfter} ago
   * (its stored events will not grow). Empty when the tenant has no such analysis.
   */
  public Future<Optional<Progress>> progress(UUID tenantId, UUID id, java.time.Duration settledAfter) {
    return run(tenantId, PROGRESS, Tuple.of(tenantId, id, settledAfter.toMillis() / 1000.0)).map(rows -> {
      if (rows.size() == 0) {
        return Optional.empty();
      }
      Row r = rows.iterator().next();
      return Optional.of(new Progress(r.getString("status"), Boolean.TRUE.equals(r.getBoolean("settled"))));
    });
  }

  /** An analysis' status, and whether it ended long enough ago that its stored events are all there will be. */
  public record Progress(String status, boolean settled) {
    public boolean running() {
      return "running".equals(status);
    }
  }

  /** Records the program's output as the baseline of later replays; false when one was there already. */
  Future<Boolean> programOutput(UUID tenantId, UUID id, String output) {
    return run(tenantId, SET_PROGRAM_OUTPUT, Tuple.of(tenantId, id, output))
        .map(r -> r.rowCount() > 0);
  }

  /** Documents (among {@code ids}, or all the tenant's when empty) created or changed after {@code since}. */
  Future<JsonArray> changedSince(UUID tenantId, OffsetDateTime since, List<UUID> ids) {
    return run(tenantId, CHANGED_DOCUMENTS, Tuple.of(tenantId, since, ids.toArray(UUID[]::new)))
        .map(rows -> {
          JsonArray out = new JsonArray();
          rows.forEach(r -> out.add(new JsonObject().put("document_id", r.getUUID("id").toString())
              .put("title", r.getString("title")).put("version", r.getInteger("version"))
              .put("updated_at", r.getOffsetDateTime("updated_at").toInstant().toString())));
          return out;
        });
  }

  /** Which of these ids are (still) documents of the tenant. */
  Future<List<UUID>> existing(UUID tenantId, List<UUID> ids) {
    return run(tenantId, EXISTING_DOCUMENTS, Tuple.of(tenantId, (Object) ids.toArray(UUID[]::new)))
        .map(rows -> {
          List<UUID> out = new ArrayList<>();
          rows.forEach(r -> out.add(r.getUUID("id")));
          return out;
        });
  }

  /** Title and uri of documents, for citations of files the code read. */
  Future<List<Row>> describe(UUID tenantId, List<UUID> ids) {
    return run(tenantId, DESCRIBE_DOCUMENTS, Tuple.of(tenantId, (Object) ids.toArray(UUID[]::new)))
        .map(rows -> {
          List<Row> out = new ArrayList<>();
          rows.forEach(out::add);
          return out;
        });
  }

  private static JsonObject toJson(Row r) {
    JsonObject error = r.getString("error_type") == null ? null
        : new JsonObject().put("type", r.getString("error_type")).put("message", r.getString("error_message"));
    OffsetDateTime finished = r.getOffsetDateTime("finished_at");
    return new JsonObject()
        .put("id", r.getUUID("id").toString())
        .put("question", r.getString("question"))
        .put("document_ids", uuids(r.getArrayOfUUIDs("scope")))
        .put("preload", uuids(r.getArrayOfUUIDs("preload")))
        .put("budgets", r.getJsonObject("budgets"))
        .put("model", r.getString("model"))
        .put("status", r.getString("status"))
        .put("error", error)
        .put("answer", r.getString("answer"))
        .put("program", r.getString("program"))
        .put("program_output", r.getString("program_output"))
        .put("citations", r.getJsonArray("citations"))
        .put("usage", r.getJsonObject("usage"))
        .put("created_at", r.getOffsetDateTime("created_at").toInstant().toString())
        .put("finished_at", finished == null ? null : finished.toInstant().toString())
        .put("follows", r.getUUID("follows") == null ? null : r.getUUID("follows").toString())
        .put("moves", r.getInteger("moves"));
  }

  static OffsetDateTime createdAt(JsonObject analysis) {
    return OffsetDateTime.parse(analysis.getString("created_at")).withOffsetSameInstant(ZoneOffset.UTC);
  }

  private static JsonArray uuids(UUID[] ids) {
    JsonArray out = new JsonArray();
    if (ids != null) {
      for (UUID id : ids) {
        out.add(id.toString());
      }
    }
    return out;
  }
  /**
   * One statement in its own transaction with the tenant set: row-level security holds every
   * statement to that tenant, over and above the tenant_id each one filters by.
   */
  private Future<RowSet<Row>> run(UUID tenantId, String sql, Tuple args) {
    Tuple safe = withoutNul(args);
    return Database.inTenant(pool, tenantId, conn -> conn.preparedQuery(sql).execute(safe));
  }

  /** What stands for a NUL character in what is stored: U+2400, SYMBOL FOR NULL. */
  static final char NUL_SHOWN_AS = '\u2400';

  /**
   * {@code args} with every NUL character in its strings (and in the strings of its JSON values)
   * shown as {@link #NUL_SHOWN_AS}: PostgreSQL's text and jsonb cannot hold U+0000, and a cell that
   * prints one (or a model that writes one) must not make its step, its events or the analysis' end
   * fail to be stored.
   */
  static Tuple withoutNul(Tuple args) {
    Tuple out = Tuple.tuple();
    for (int i = 0; i < args.size(); i++) {
      out.addValue(withoutNul(args.getValue(i)));
    }
    return out;
  }

  static Object withoutNul(Object value) {
    return switch (value) {
      case String s -> s.indexOf('\0') < 0 ? s : s.replace('\0', NUL_SHOWN_AS);
      case String[] a -> java.util.Arrays.stream(a).map(v -> (String) withoutNul(v)).toArray(String[]::new);
      case JsonObject o -> {
        JsonObject copy = new JsonObject();
        o.forEach(e -> copy.put((String) withoutNul(e.getKey()), withoutNul(e.getValue())));
        yield copy;
      }
      case JsonArray a -> {
        JsonArray copy = new JsonArray();
        a.forEach(v -> copy.add(withoutNul(v)));
        yield copy;
      }
      case null, default -> value;
    };
  }
}
