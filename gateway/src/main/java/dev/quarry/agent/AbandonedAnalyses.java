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
 * {@code quarry.all_tenants} set: the sweep is the owner's function {@code end_abandoned_analyses}
 * (V11), which the gateway's own role may call, so no owner connection is held for it.
 */
public final class AbandonedAnalyses {

  /** Longer than anything an analysis does after its wall time: the last model call, its end's retries. */
  public static final Duration DEFAULT_GRACE = Duration.ofMinutes(10);

  static final String MESSAGE = "the gateway running this analysis stopped without recording its end"
      + " (killed or lost); the steps and events stored until then are kept";

  // The function ends the analyses and writes their terminal events in one statement: both or neither.
  private static final String SWEEP = "SELECT id AS analysis_id FROM end_abandoned_analyses($1, $2) AS id";

  private final Pool pool;
  private final Duration grace;

  /** @param pool the gateway's pool (the app role may call the sweep's function) */
  public AbandonedAnalyses(Pool pool, Duration grace) {
    this.pool = pool;
    this.grace = grace;
  }

  /** Ends what is abandoned now; completes with the ids of the analyses it ended. */
  public Future<List<UUID>> sweep() {
    return pool.preparedQuery(SWEEP).execute(Tuple.of((double) grace.toSeconds(), MESSAGE))
        .map(rows -> {
          List<UUID> ended = new ArrayList<>();
          for (Row row : rows) {
            ended.add(row.getUUID("analysis_id"));
          }
          return ended;
        });
  }
}
