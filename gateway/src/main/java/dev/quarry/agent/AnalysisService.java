package dev.quarry.agent;

import dev.quarry.sandbox.CellOptions;
import dev.quarry.search.SearchService;
import dev.quarry.store.DocumentStore;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Starts analyses and finds them again: running ones in memory (so that their streams can be
 * joined), finished ones in the store. Each analysis runs on a virtual thread of its own.
 */
public final class AnalysisService {

  /** What every analysis run needs. */
  record Deps(ModelClient model, SandboxOpener sandboxes, SearchService search, DocumentStore documents,
      AnalysisStore store, AgentSettings settings, CellOptions cellDefaults, int searchMaxLimit,
      int maxQueryChars, Clock clock, AnalysisService service) {
    void finished(LiveAnalysis live) {
      service.running.remove(live.id());
    }
  }

  private final Map<UUID, LiveAnalysis> running = new ConcurrentHashMap<>();
  private final Deps deps;

  public AnalysisService(ModelClient model, SandboxOpener sandboxes, SearchService search, DocumentStore documents,
      AnalysisStore store, AgentSettings settings, CellOptions cellDefaults, int searchMaxLimit, int maxQueryChars) {
    this.deps = new Deps(model, sandboxes, search, documents, store, settings, cellDefaults, searchMaxLimit,
        maxQueryChars, Clock.systemUTC(), this);
  }

  public AgentSettings settings() {
    return deps.settings();
  }

  public AnalysisStore store() {
    return deps.store();
  }

  /**
   * Records the analysis and starts it. Fails (before anything is recorded) when no model is
   * configured, or when a scoped or preloaded document is not the tenant's.
   */
  public Future<LiveAnalysis> start(UUID tenantId, AnalysisRequest request) {
    if (!deps.model().configured()) {
      return Future.failedFuture(new AnalysisRefused(503, "model_not_configured", AgentSettings.HOW_TO_CONFIGURE));
    }
    List<UUID> named = new ArrayList<>(request.scope().documentIds());
    request.preload().stream().filter(id -> !named.contains(id)).forEach(named::add);
    UUID id = UUID.randomUUID();
    return deps.store().existing(tenantId, named)
        .compose(found -> {
          List<UUID> unknown = named.stream().filter(d -> !found.contains(d)).toList();
          if (!unknown.isEmpty()) {
            return Future.failedFuture(new AnalysisRefused(404, "unknown_documents",
                "no documents with ids " + unknown + " for this tenant"));
          }
          List<UUID> outside = request.preload().stream().filter(d -> !request.scope().includes(d)).toList();
          if (!outside.isEmpty()) {
            return Future.failedFuture(new AnalysisRefused(400, "preload_outside_scope",
                "preloaded documents " + outside + " are not in document_ids"));
          }
          return deps.store().insert(tenantId, id, request.question(),
              List.copyOf(request.scope().documentIds()), request.preload(), request.budgets(), deps.model().model());
        })
        .map(v -> {
          LiveAnalysis live = new LiveAnalysis(id, tenantId, deps.store(), deps.clock());
          running.put(id, live);
          Thread.ofVirtual().name("analysis-" + id).start(new AnalysisRun(deps, live, request));
          return live;
        });
  }

  /** A running analysis of the tenant, to listen to or cancel. */
  public Optional<LiveAnalysis> running(UUID tenantId, UUID id) {
    return Optional.ofNullable(running.get(id)).filter(a -> a.tenantId().equals(tenantId));
  }

  public int runningCount() {
    return running.size();
  }

  public Future<Optional<JsonObject>> get(UUID tenantId, UUID id) {
    return deps.store().get(tenantId, id);
  }

  public Future<List<JsonObject>> list(UUID tenantId, int limit) {
    return deps.store().list(tenantId, limit);
  }

  /** Cancels every running analysis (gateway shutdown); each still records its end. */
  public Future<Void> close() {
    List<Future<JsonObject>> ends = new ArrayList<>();
    for (LiveAnalysis live : running.values()) {
      live.cancel();
      ends.add(live.finished());
    }
    return Future.join(ends).mapEmpty();
  }

  /** A request refused before the analysis started, with the HTTP status and code to show. */
  public static final class AnalysisRefused extends RuntimeException {
    private final int status;
    private final String code;

    AnalysisRefused(int status, String code, String message) {
      super(message, null, false, false);
      this.status = status;
      this.code = code;
    }

    public int status() {
      return status;
    }

    public String code() {
      return code;
    }
  }
}
