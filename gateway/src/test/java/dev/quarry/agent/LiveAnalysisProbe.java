package dev.quarry.agent;

import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.util.List;
import java.util.UUID;

/** For tests outside this package: a running analysis (stored, so its events can be written) they feed events. */
public final class LiveAnalysisProbe {
  private LiveAnalysisProbe() {}

  /** A new running analysis of {@code tenant}, its row inserted, with the default event caps. */
  public static LiveAnalysis start(AnalysisStore store, UUID tenant) {
    UUID id = UUID.randomUUID();
    store.insert(tenant, id, "q", List.of(), List.of(), Budgets.DEFAULTS, "m", null, null).await();
    return new LiveAnalysis(id, tenant, store, Clock.systemUTC());
  }

  /** Appends an event and hands it to the listeners, as the analysis' loop does. */
  public static AnalysisEvent emit(LiveAnalysis live, String type, JsonObject data) {
    return live.emit(type, data);
  }

  /** How many streams listen to it now. */
  public static int listeners(LiveAnalysis live) {
    return live.followers();
  }
}
