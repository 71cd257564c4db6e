package dev.quarry.agent;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An analysis while it runs: its events in order (kept in memory and written to the store in the
 * same order), the streams listening to them, and the means to cancel it. Events come from the
 * loop's thread and from the sandbox's event loop alike, hence the lock.
 */
public final class LiveAnalysis {
  private static final Logger log = LoggerFactory.getLogger(LiveAnalysis.class);

  private final UUID id;
  private final UUID tenantId;
  private final AnalysisStore store;
  private final Clock clock;
  private final List<AnalysisEvent> events = new ArrayList<>();
  private final List<Consumer<AnalysisEvent>> listeners = new ArrayList<>();
  private final Promise<JsonObject> finished = Promise.promise();
  /** Events emitted but not yet handed to the store. */
  private List<AnalysisEvent> unwritten = new ArrayList<>();
  /** Completes when every event handed to the store so far is written (or failed and logged). */
  private Future<Void> writes = Future.succeededFuture();
  private boolean writing;
  private long nextSeq = 1;
  private volatile boolean cancelled;
  private volatile Runnable onCancel = () -> {};

  LiveAnalysis(UUID id, UUID tenantId, AnalysisStore store, Clock clock) {
    this.id = id;
    this.tenantId = tenantId;
    this.store = store;
    this.clock = clock;
  }

  public UUID id() {
    return id;
  }

  public UUID tenantId() {
    return tenantId;
  }

  /**
   * Appends an event, hands it to every listener and queues its write. One write is in flight at a
   * time; what is emitted meanwhile goes in the next one, together: the order is kept and a step's
   * several events cost one transaction rather than one each.
   */
  synchronized AnalysisEvent emit(String type, JsonObject data) {
    AnalysisEvent event = AnalysisEvent.of(nextSeq++, type, clock.millis(), data);
    events.add(event);
    unwritten.add(event);
    if (!writing) {
      writeUnwritten();
    }
    for (Consumer<AnalysisEvent> listener : List.copyOf(listeners)) {
      listener.accept(event);
    }
    return event;
  }

  /** Called with the lock held and events waiting: writes them, then whatever came meanwhile. */
  private void writeUnwritten() {
    writing = true;
    List<AnalysisEvent> batch = unwritten;
    unwritten = new ArrayList<>();
    writes = store.events(tenantId, id, batch)
        .onFailure(e -> log.warn("analysis {}: events {}-{} not stored: {}", id, batch.get(0).seq(),
            batch.get(batch.size() - 1).seq(), e.toString()))
        .otherwiseEmpty()
        .compose(v -> {
          synchronized (this) {
            if (unwritten.isEmpty()) {
              writing = false;
              return Future.<Void>succeededFuture();
            }
            writeUnwritten();
            return writes;
          }
        });
  }

  /** Completes when every event so far is stored. */
  synchronized Future<Void> flushed() {
    return writes.otherwiseEmpty();
  }

  /**
   * Sends the events after {@code afterSeq} to the listener, then each new one as it happens.
   * Returns what stops listening.
   */
  public synchronized Runnable listen(long afterSeq, Consumer<AnalysisEvent> listener) {
    for (AnalysisEvent e : events) {
      if (e.seq() > afterSeq) {
        listener.accept(e);
      }
    }
    listeners.add(listener);
    return () -> {
      synchronized (this) {
        listeners.remove(listener);
      }
    };
  }

  /** The finished analysis as GET /v1/analyses/{id} shows it, once it is all stored. */
  public Future<JsonObject> finished() {
    return finished.future();
  }

  void complete(JsonObject analysis) {
    finished.tryComplete(analysis);
  }

  public void cancel() {
    cancelled = true;
    onCancel.run();
  }

  boolean cancelled() {
    return cancelled;
  }

  void onCancel(Runnable action) {
    this.onCancel = action;
    if (cancelled) {
      action.run();
    }
  }
}
