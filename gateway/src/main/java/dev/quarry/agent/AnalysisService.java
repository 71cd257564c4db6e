package dev.quarry.agent;

import dev.quarry.telemetry.QuarryMetrics;
import dev.quarry.sandbox.CellOptions;
import dev.quarry.sandbox.Scope;
import dev.quarry.callbacks.CallbackService;
import dev.quarry.tenancy.Quotas;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Starts analyses and finds them again: running ones in memory (so that their streams can be
 * joined), finished ones in the store. Each analysis runs on a virtual thread of its own.
 */
public final class AnalysisService {
  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(AnalysisService.class);

  /** What every analysis run needs. */
  record Deps(ModelClient model, SandboxOpener sandboxes, CallbackService callbacks, AnalysisStore store,
      AgentSettings settings, CellOptions cellDefaults, Clock clock, QuarryMetrics metrics, AnalysisService service) {
    /**
     * The analysis was stopped here to be handed off (this replica drains): once its events are all
     * stored, the record says nobody holds it and every replica hears so, and one takes it over.
     */
    void handedOff(LiveAnalysis live) {
      try {
        live.flushed().await();
        if (!live.lostHold()) {
          service.handBack(live.tenantId(), live.id(), !live.handedBackQuietly()).await();
        }
        metrics.analysisHandedOff();
      } finally {
        JsonObject now;
        try {
          now = store.get(live.tenantId(), live.id()).await().orElse(null);
        } catch (RuntimeException e) {
          now = null;
        }
        live.gone(now != null ? now : new JsonObject().put("id", live.id().toString()).put("status", "running"));
        finished(live);
      }
    }

    /**
     * Gives back what the analysis holds of its tenant's quota, before its terminal event goes out:
     * a client that starts the next analysis on seeing the end of this one must find the place free.
     */
    Future<Void> release(LiveAnalysis live) {
      Quotas.Permit permit = service.releases.remove(live.id());
      return permit == null ? Future.succeededFuture() : permit.release();
    }

    void finished(LiveAnalysis live) {
      release(live);
      service.running.remove(live.id());
      Runnable end = service.work.remove(live.id());
      if (end != null) {
        end.run();
      }
    }
  }

  /**
   * Registers running work with whoever drains the gateway: {@code begin} fails while draining,
   * {@code cancel} is called when the grace period is over; the returned action ends the work.
   */
  @FunctionalInterface
  public interface WorkTracker {
    Runnable begin(Runnable cancel);
  }

  private final Map<UUID, Runnable> work = new ConcurrentHashMap<>();
  private final Map<UUID, Quotas.Permit> releases = new ConcurrentHashMap<>();
  private volatile WorkTracker tracker = cancel -> () -> {};

  private final Map<UUID, LiveAnalysis> running = new ConcurrentHashMap<>();
  /** Followers here of analyses that run elsewhere (or have just ended), woken as their events are stored. */
  private final EventWakeups wakeups = new EventWakeups();
  private final Deps deps;
  private final Quotas quotas;
  private final AnalysisRecords records;
  /** This replica's id among those sharing the database (it holds the analyses it runs under it). */
  private volatile UUID replica;
  /** How many replicas are live: a drain hands its analyses off only when another one is. */
  private volatile java.util.function.IntSupplier liveReplicas = () -> 1;
  private volatile boolean draining;
  /** Take-overs that failed here, per analysis (a fourth is not handed back again). */
  private final Map<UUID, Integer> takeOverFailures = new ConcurrentHashMap<>();

  /**
   * @param callbacks what each analysis' sandbox may call (search, documents, llm()), and the tenants'
   *                  daily token account its model turns are counted in too
   * @param quotas    the tenants' quotas: an analysis starts only with tokens left today and a place
   *                  among the tenant's running analyses
   */
  public AnalysisService(ModelClient model, SandboxOpener sandboxes, CallbackService callbacks, Quotas quotas,
      AnalysisStore store, AgentSettings settings, CellOptions cellDefaults, QuarryMetrics metrics) {
    this.quotas = quotas;
    this.deps = new Deps(model, sandboxes, callbacks, store, settings, cellDefaults, Clock.systemUTC(), metrics, this);
    this.records = new AnalysisRecords(store.pool());
  }

  /**
   * Holds the analyses started here under this replica's id (its lease is theirs), and lets the
   * drain hand them off when another replica is live to take them.
   */
  public AnalysisService holdAs(UUID replicaId, java.util.function.IntSupplier live) {
    this.replica = replicaId;
    this.liveReplicas = live;
    return this;
  }

  /** Analyses from now on register with this tracker (the gateway's drain). */
  public AnalysisService trackWith(WorkTracker tracker) {
    this.tracker = tracker;
    return this;
  }

  public AgentSettings settings() {
    return deps.settings();
  }

  public AnalysisStore store() {
    return deps.store();
  }

  /**
   * Records the analysis and starts it, as the tenant's quotas allow. Fails (before anything is
   * recorded) when no model is configured, when the tenant's tokens for the day are spent or it
   * runs as many analyses as it may (QuotaExceeded), or when a scoped or preloaded document is not
   * the tenant's. Tokens first: a tenant out of tokens takes no place among the running analyses,
   * and the place goes back when the analysis ends, whichever way, or when it does not start.
   */
  public Future<LiveAnalysis> start(UUID tenantId, AnalysisRequest request) {
    if (!deps.model().configured()) {
      return Future.failedFuture(new AnalysisRefused(AnalysisRefused.Reason.MODEL_NOT_CONFIGURED,
          AgentSettings.HOW_TO_CONFIGURE));
    }
    return admitted(tenantId, request, null, null);
  }

  /** Starts it once the tenant has tokens left today and a place among its running analyses. */
  private Future<LiveAnalysis> admitted(UUID tenantId, AnalysisRequest request, UUID follows, Rebuild rebuild) {
    return deps.callbacks().tokens().allowed(tenantId)
        .compose(left -> quotas.acquireAnalysis(tenantId))
        .compose(permit -> start(tenantId, request, permit, follows, rebuild));
  }

  private Future<LiveAnalysis> start(UUID tenantId, AnalysisRequest request, Quotas.Permit permit, UUID follows,
      Rebuild rebuild) {
    Runnable release = permit::close;
    List<UUID> named = new ArrayList<>(request.scope().documentIds());
    request.preload().stream().filter(id -> !named.contains(id)).forEach(named::add);
    UUID id = UUID.randomUUID();
    LiveAnalysis live = new LiveAnalysis(id, tenantId, deps.store(), deps.clock(), deps.settings().maxEvents(),
        deps.settings().maxEventChars(), replica, 0, 0);
    Runnable end;
    try {
      // Refused while the gateway drains, before anything is recorded.
      end = tracker.begin(live::cancel);
    } catch (RuntimeException e) {
      release.run();
      return Future.failedFuture(e);
    }
    return deps.store().existing(tenantId, named)
        .compose(found -> {
          List<UUID> unknown = named.stream().filter(d -> !found.contains(d)).toList();
          if (!unknown.isEmpty()) {
            return Future.failedFuture(new AnalysisRefused(AnalysisRefused.Reason.UNKNOWN_DOCUMENTS,
                "no documents with ids " + unknown + " for this tenant"));
          }
          List<UUID> outside = request.preload().stream().filter(d -> !request.scope().includes(d)).toList();
          if (!outside.isEmpty()) {
            return Future.failedFuture(new AnalysisRefused(AnalysisRefused.Reason.PRELOAD_OUTSIDE_SCOPE,
                "preloaded documents " + outside + " are not in document_ids"));
          }
          return deps.store().insert(tenantId, id, request.question(),
              List.copyOf(request.scope().documentIds()), request.preload(), request.budgets(), deps.model().model(),
              replica, follows);
        })
        .onFailure(e -> {
          end.run();
          release.run();
        })
        .map(v -> {
          releases.put(id, permit);
          running.put(id, live);
          work.put(id, end);
          Thread.ofVirtual().name("analysis-" + id).start(new AnalysisRun(deps, live, request, rebuild));
          return live;
        });
  }

  /** The most analyses one follow-up rebuilds (itself excluded): each adds its cells to every rebuild. */
  public static final int MAX_FOLLOWED = 16;
  /** How many analyses a replica takes over at a time (it takes more at its next look). */
  static final int TAKE_AT_ONCE = 8;
  private static final String HANDED_OFF = "handoff";

  /**
   * Asks a finished analysis another question: a new analysis that {@code follows} it, with the
   * same documents, whose model is given the earlier conversation and whose sandbox is rebuilt from
   * the earlier analyses' records (their cells run again, their callbacks answered from the record),
   * so that its code finds their variables and files. Refused when the analysis is not the tenant's
   * (empty), has not answered, or ends a chain of {@value #MAX_FOLLOWED} follow-ups.
   */
  public Future<Optional<LiveAnalysis>> followUp(UUID tenantId, UUID parentId, String question, Budgets budgets) {
    if (!deps.model().configured()) {
      return Future.failedFuture(new AnalysisRefused(AnalysisRefused.Reason.MODEL_NOT_CONFIGURED,
          AgentSettings.HOW_TO_CONFIGURE));
    }
    return deps.store().record(tenantId, parentId).compose(found -> {
      if (found.isEmpty()) {
        return Future.succeededFuture(Optional.<LiveAnalysis>empty());
      }
      String status = found.get().getString("status");
      if (!"succeeded".equals(status)) {
        return Future.failedFuture(new AnalysisRefused(AnalysisRefused.Reason.NOT_ANSWERED, "analysis " + parentId
            + " has not answered (its status is " + status + "): only an answered analysis takes a follow-up"));
      }
      return chain(tenantId, parentId, new ArrayList<>()).compose(followed -> {
        AnalysisRequest first = AnalysisRecords.request(followed.get(followed.size() - 1));
        AnalysisRequest request = new AnalysisRequest(question, first.scope(), first.preload(), budgets);
        return admitted(tenantId, request, parentId, new Rebuild(followed, null)).map(Optional::of);
      });
    });
  }

  /** The records of {@code id} and of the analyses it follows, oldest first; refused past {@value #MAX_FOLLOWED}. */
  private Future<List<AnalysisRecord>> chain(UUID tenantId, UUID id, List<AnalysisRecord> newestFirst) {
    if (newestFirst.size() >= MAX_FOLLOWED) {
      return Future.failedFuture(new AnalysisRefused(AnalysisRefused.Reason.FOLLOW_UPS_EXHAUSTED, "a follow-up"
          + " rebuilds at most " + MAX_FOLLOWED + " earlier analyses; start a new analysis instead"));
    }
    return records.load(tenantId, id).compose(found -> {
      if (found.isEmpty()) {
        return Future.failedFuture(new IllegalStateException("analysis " + id + " of a follow-up chain is gone"));
      }
      newestFirst.add(found.get());
      if (found.get().follows() == null) {
        List<AnalysisRecord> oldestFirst = new ArrayList<>(newestFirst);
        java.util.Collections.reverse(oldestFirst);
        return Future.succeededFuture(oldestFirst);
      }
      return chain(tenantId, found.get().follows(), newestFirst);
    });
  }

  /**
   * Takes over the running analyses no live replica holds (theirs died, or handed them off), up to
   * {@value #TAKE_AT_ONCE}, and carries each on here from its record. Completes with how many.
   * Nothing while this replica drains or has no model.
   */
  public Future<Integer> takeOver() {
    UUID me = replica;
    if (me == null || draining || !deps.model().configured()) {
      return Future.succeededFuture(0);
    }
    return records.takeOver(me, TAKE_AT_ONCE).map(taken -> {
      for (AnalysisRecords.Taken t : taken) {
        resume(t.tenantId(), t.id()).onFailure(e -> {
          // Handed back for another try, at most three times here: a take-over that fails the same way
          // each time must not spin (it stays held by this replica, unrun, until this replica stops).
          int failures = takeOverFailures.merge(t.id(), 1, Integer::sum);
          if (failures <= 3) {
            log.warn("analysis {}: taking it over failed ({} of 3), handing it back: {}", t.id(), failures, e.toString());
            handBack(t.tenantId(), t.id());
          } else {
            log.error("analysis {}: taking it over failed {} times; left held by this replica, unrun", t.id(),
                failures, e);
          }
        });
      }
      return taken.size();
    });
  }

  /** Carries on, here, a running analysis this replica has just taken over. */
  private Future<Void> resume(UUID tenantId, UUID id) {
    long noticed = System.nanoTime();
    return records.load(tenantId, id).compose(found -> {
      if (found.isEmpty() || found.get().terminal()) {
        return Future.succeededFuture();
      }
      AnalysisRecord own = found.get();
      Future<List<AnalysisRecord>> followed = own.follows() == null ? Future.succeededFuture(List.of())
          : chain(tenantId, own.follows(), new ArrayList<>());
      return followed.compose(before -> quotas.holdAnalysis(tenantId).compose(permit -> {
        LiveAnalysis live = new LiveAnalysis(id, tenantId, deps.store(), deps.clock(), deps.settings().maxEvents(),
            deps.settings().maxEventChars(), replica, own.lastSeq(), own.storedChars());
        Runnable end;
        try {
          end = tracker.begin(live::handOff);
        } catch (RuntimeException e) {
          permit.close();
          return Future.failedFuture(e);
        }
        AnalysisRequest request = AnalysisRecords.request(own);
        java.time.Instant deadline = deps.clock().instant()
            .plus(own.wallTimeLeft(java.time.Duration.ofMillis(request.budgets().wallTimeMs())));
        return records.deadline(tenantId, id, deadline)
            .onFailure(e -> {
              end.run();
              permit.close();
            })
            .map(v -> {
              AnalysisRun run;
              try {
                run = new AnalysisRun(deps, live, request, new Rebuild(before, own));
              } catch (RuntimeException e) {
                // Nothing registered yet: the place and the drain's work item go back with the failure.
                end.run();
                permit.close();
                throw e;
              }
              releases.put(id, permit);
              running.put(id, live);
              work.put(id, end);
              deps.metrics().analysisTakenOver(System.nanoTime() - noticed);
              log.info("analysis {}: taken over (move {}), rebuilding {} cells of its own and {} earlier analyses",
                  id, own.moves(), own.finishedCells(), before.size());
              if (own.cancelRequested()) {
                live.cancel();
              }
              Thread.ofVirtual().name("analysis-" + id).start(run);
              return null;
            });
      }));
    });
  }

  /** Lets go of an analysis this replica holds, and tells every replica so that one takes it at once. */
  Future<Void> handBack(UUID tenantId, UUID id) {
    return handBack(tenantId, id, true);
  }

  /** As above; {@code announce} false leaves it to whichever replica looks next (every 2 s). */
  Future<Void> handBack(UUID tenantId, UUID id, boolean announce) {
    UUID me = replica;
    if (me == null) {
      return Future.succeededFuture();
    }
    return records.handOff(tenantId, id, me)
        .compose(done -> done && announce ? deps.store().announce(CHANNEL, HANDED_OFF + " " + tenantId + " " + id)
            : Future.succeededFuture())
        .onFailure(e -> log.warn("analysis {}: handing it off failed (it is taken over once this replica's lease"
            + " lapses): {}", id, e.toString()));
  }

  /**
   * The drain begins: no more take-overs here, and, when another replica is live to take them, every
   * analysis running here is handed off at once rather than left to finish or be cancelled.
   */
  public void drain() {
    draining = true;
    if (replica != null && liveReplicas.getAsInt() >= 2) {
      running.values().forEach(LiveAnalysis::handOff);
    }
  }

  /** What wakes the followers on this replica of analyses that run on another (Cluster feeds it). */
  public EventWakeups wakeups() {
    return wakeups;
  }

  /**
   * A place among the event streams following the analysis, counted across the replicas (its own
   * POST's stream included); fails with {@code Places.Full} when {@code most} follow it already.
   */
  public Future<Quotas.Permit> followerPlace(UUID tenantId, UUID id, int most) {
    return quotas.acquireFollower(tenantId, id, most);
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

  /**
   * Runs an analysis' stored program in a fresh sandbox with the analysis' scope. The first replay's
   * output becomes the baseline; later replays say whether they match it. Also lists the documents
   * created or changed since the analysis ran, and the scoped ones that are gone.
   */
  public Future<Optional<JsonObject>> replay(UUID tenantId, UUID id) {
    return get(tenantId, id).compose(found -> {
      if (found.isEmpty()) {
        return Future.succeededFuture(Optional.empty());
      }
      JsonObject analysis = found.get();
      String program = analysis.getString("program");
      if (program == null) {
        return Future.failedFuture(new AnalysisRefused(AnalysisRefused.Reason.NO_PROGRAM,
            "analysis " + id + " has no program to replay (its status is " + analysis.getString("status") + ")"));
      }
      List<UUID> scopeIds = analysis.getJsonArray("document_ids").stream().map(o -> UUID.fromString((String) o)).toList();
      List<UUID> preload = analysis.getJsonArray("preload").stream().map(o -> UUID.fromString((String) o)).toList();
      Scope scope = new Scope(Set.copyOf(scopeIds));
      CompletableFuture<JsonObject> run = new CompletableFuture<>();
      Thread.ofVirtual().name("replay-" + id).start(() -> {
        try {
          run.complete(new ProgramReplay(deps, tenantId, scope, preload).run(program));
        } catch (Throwable e) {
          // Whatever ends it (await() rethrows checked exceptions as they are), the request is answered.
          run.completeExceptionally(e);
        }
      });
      return Future.fromCompletionStage(run).compose(result -> {
        String output = result.getString("stdout");
        String baseline = analysis.getString("program_output");
        Future<JsonObject> compared = baseline != null
            ? Future.succeededFuture(result.copy().put("baseline", "compared").put("matches", baseline.equals(output)))
            : deps.store().programOutput(tenantId, id, output)
                .map(recorded -> result.copy().put("baseline", "recorded").put("matches", (Object) null));
        return compared.compose(r -> deps.store().changedSince(tenantId, AnalysisStore.createdAt(analysis), scopeIds)
            .compose(changed -> deps.store().existing(tenantId, scopeIds).map(existing -> {
              JsonArray missing = new JsonArray();
              scopeIds.stream().filter(d -> !existing.contains(d)).forEach(d -> missing.add(d.toString()));
              return Optional.of(new JsonObject().put("analysis_id", id.toString()).put("replay", r)
                  .put("documents_changed", changed).put("documents_missing", missing));
            })));
      });
    });
  }

  /**
   * Ends every running analysis of the tenant (it was deleted): each stops as a cancel would, and
   * ends failed with {@code TenantDeleted}. Returns how many were running.
   */
  public int endTenant(UUID tenantId) {
    int ended = 0;
    for (LiveAnalysis live : running.values()) {
      if (live.tenantId().equals(tenantId)) {
        live.fail("TenantDeleted", "the tenant was deleted while the analysis ran");
        ended++;
      }
    }
    return ended;
  }

  /** The notification channel on which replicas ask each other to cancel an analysis. */
  public static final String CHANNEL = "quarry_analyses";
  private static final String CANCEL = "cancel";

  /**
   * Cancels a running analysis of the tenant, on whichever replica runs it: here at once, elsewhere
   * through a notification that its replica acts on. Empty when the tenant has no such analysis;
   * otherwise its status when asked ({@code running}: it ends {@code cancelled}, as its record and
   * stream then say; another status: it had already ended, and nothing changes).
   */
  public Future<Optional<String>> cancel(UUID tenantId, UUID id) {
    Optional<LiveAnalysis> here = running(tenantId, id);
    if (here.isPresent()) {
      here.get().cancel();
      return Future.succeededFuture(Optional.of("running"));
    }
    return deps.store().get(tenantId, id).compose(found -> {
      if (found.isEmpty()) {
        return Future.succeededFuture(Optional.<String>empty());
      }
      String status = found.get().getString("status");
      if (!"running".equals(status)) {
        return Future.succeededFuture(Optional.of(status));
      }
      // It may have started here since the first look, or run on another replica: both hear this. It
      // may also be held by nobody (its replica died, not yet taken over): the record says so too.
      return records.requestCancel(tenantId, id)
          .compose(v -> deps.store().announce(CHANNEL, CANCEL + " " + tenantId + " " + id))
          .map(v -> Optional.of(status));
    });
  }

  /** Acts on a notification of {@link #CHANNEL}: cancels the named analysis if it runs here. */
  public void signalled(String payload) {
    String[] parts = payload == null ? new String[0] : payload.split(" ");
    if (parts.length == 3 && parts[0].equals(HANDED_OFF)) {
      takeOver().onFailure(e -> log.debug("taking over a handed-off analysis: {}", e.toString()));
      return;
    }
    if (parts.length == 3 && parts[0].equals(CANCEL)) {
      try {
        running(UUID.fromString(parts[1]), UUID.fromString(parts[2])).ifPresent(LiveAnalysis::cancel);
      } catch (IllegalArgumentException e) {
        // not ours to read: a newer replica's message
      }
    }
  }

  /** The tenants that have analyses running here now. */
  public Set<UUID> tenantsRunning() {
    Set<UUID> tenants = new java.util.HashSet<>();
    running.values().forEach(live -> tenants.add(live.tenantId()));
    return tenants;
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

  /** A request refused before its work started, and why; the HTTP layer decides what status that is. */
  public static final class AnalysisRefused extends RuntimeException {
    /** Why: each reason is one error code of the API, in lower case. */
    public enum Reason { MODEL_NOT_CONFIGURED, UNKNOWN_DOCUMENTS, PRELOAD_OUTSIDE_SCOPE, NO_PROGRAM, SANDBOX_UNAVAILABLE,
      NOT_ANSWERED, FOLLOW_UPS_EXHAUSTED }

    private final Reason reason;

    public AnalysisRefused(Reason reason, String message) {
      super(message, null, false, false);
      this.reason = reason;
    }

    public Reason reason() {
      return reason;
    }

    /** The API's error code for it. */
    public String code() {
      return reason.name().toLowerCase(java.util.Locale.ROOT);
    }
  }
}
