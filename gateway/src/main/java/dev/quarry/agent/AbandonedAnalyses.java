package dev.quarry.agent;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Ends the analyses that a gateway left {@code running} when it died without recording their end
 * (killed, out of memory, its node lost): a SIGTERM drains and records every end, but nothing
 * runs after a SIGKILL. Any gateway may sweep: an analysis cannot legitimately run longer than its
 * own wall-time budget, so one still {@code running} well after it is abandoned, whichever replica
 * started it. It ends {@code failed} with {@code GatewayLost}, keeping every step and event stored
 * until then, and gets the terminal event that its stored stream lacks.
 *
 * <p>Analyses of every tenant are swept, which row-level security allows only the owner role with
 * {@code quarry.all_tenants} set: the sweep runs on the owner's pool.
 */
public final class AbandonedAnalyses {

  /** Longer than anything an analysis does after its wall time: the last model call, its end's retries. */
  public static final Duration DEFAULT_GRACE = Duration.ofMinutes(10);

  static final String MESSAGE = "the gateway running this analysis stopped without recording its end"
      + " (killed or lost); the steps and events stored until then are kept";

  // One statement: the analyses are ended and their terminal events written together or not at all.
  private static final String SWEEP = """
      WITH lost AS (
        UPDATE analyses
           SET status = 'failed', error_type = 'GatewayLost', error_message = $2, finished_at = now()
         WHERE status = 'running'
           AND created_at + make_interval(secs => (budgets->>'wall_time_ms')::double precision / 1000 + $1) < now()
        RETURNING tenant_id, id, usage)
      INSERT INTO analysis_events (tenant_id, analysis_id, seq, type, body)
      SELECT l.tenant_id, l.id, n.seq, 'failed',
             json_build_object('seq', n.seq, 'type', 'failed',
               'at', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
               'status', 'failed', 'error', json_build_object('type', 'GatewayLost', 'message', $2),
               'usage', l.usage)::text
        FROM lost l
        CROSS JOIN LATERAL (SELECT coalesce(max(e.seq), 0) + 1 AS seq FROM analysis_events e
                             WHERE e.analysis_id = l.id) n
      RETURNING analysis_id""";

  private final Pool ownerPool;
  private final Duration grace;

  public AbandonedAnalyses(Pool ownerPool, Duration grace) {
    this.ownerPool = ownerPool;
    this.grace = grace;
  }

  /** Ends what is abandoned now; completes with the ids of the analyses it ended. */
  public Future<List<UUID>> sweep() {
    return ownerPool.withTransaction(conn -> conn
        .query("SELECT set_config('quarry.all_tenants', 'on', true)").execute()
        .compose(v -> conn.preparedQuery(SWEEP).execute(Tuple.of((double) grace.toSeconds(), MESSAGE)))
        .map(rows -> {
          List<UUID> ended = new ArrayList<>();
          for (Row row : rows) {
            ended.add(row.getUUID("analysis_id"));
          }
          return ended;
        }));
  }
}
