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
 * An analysis while it runs: its events in order (kept in memory, handed to listeners at once and
 * written to the store in the same order, together with the steps that ended and the usage), the
 * streams listening to them, and the means to cancel it. Events come from the loop's thread and
 * from the sandbox's event loop alike, hence the lock.
 *
 * <p>Events are written as they come, batched: at most {@value #LINGER_MS} ms after the first of a
 * batch (or at once when {@value #HELD_EVENTS} wait, or when the loop asks the model), one write in
 * flight at a time, in order. So a cell's output is stored while the cell runs, not held until the
 * next model turn, and followers on other replicas read it from the store within that delay
 * (decision record 0080).
 */
public final class LiveAnalysis {
  private static final Logger log = LoggerFactory.getLogger(LiveAnalysis.class);
  /** Events held back at most before they are written anyway. */
  static final int HELD_EVENTS = 64;
  /** How long the first event of a batch waits for others before the batch is written. */
  public static final long LINGER_MS = 50;
  /** Runs the lingering writes' timers (a write itself is asynchronous: the timer only starts it). */
  private static final java.util.concurrent.ScheduledExecutorService LINGER = java.util.concurrent.Executors
      .newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "analysis-event-writes");
        t.setDaemon(true);
        return t;
      });
  /** What a cell may have recorded at most: its output and callbacks (the analysis' other events are bounded by its budgets). */
  private static final java.util.Set<String> CAPPED_TYPES = java.util.Set.of(AnalysisEvent.OUTPUT, AnalysisEvent.CALLBACK);

  private final UUID id;
  private final UUID tenantId;
  private final AnalysisStore store;
  private final Clock clock;
  private final List<AnalysisEvent> events = new ArrayList<>();
  private final List<Consumer<AnalysisEvent>> listeners = new ArrayList<>();
  private final Promise<JsonObject> finished = Promise.promise();
  /** What happened and is not yet handed to the store: events, ended steps, the latest usage. */
  private List<AnalysisEvent> unwritten = new ArrayList<>();
  private List<AnalysisStore.StepRecord> unwrittenSteps = new ArrayList<>();
  private List<CallbackRecord> unwrittenCallbacks = new ArrayList<>();
  private JsonObject unwrittenUsage;
  /** Completes when everything handed to the store so far is written (or failed and logged). */
  private Future<Void> writes = Future.succeededFuture();
  private boolean writing;
  /** Whether what waits should be written as soon as the write in flight (if any) is done. */
  private boolean writeWanted;
  /** Whether a lingering write is scheduled. */
  private boolean lingering;
  /** The first write that failed: the analysis' record is incomplete. */
  private volatile Throwable writeFailure;
  private long nextSeq = 1;
  /** How many of {@link #events} were handed to the listeners (those stored, in order). */
  private int delivered;
  /** What to do when the analysis goes on elsewhere (handed off, or taken over from under it). */
  private final List<Runnable> onGone = new ArrayList<>();
  private boolean gone;
  /** The seq of the first event this process holds: earlier ones were stored by a replica that ran it before. */
  private final long firstSeq;
  /** The replica that holds it (each write checks it still does); null: not checked. */
  private final UUID holder;
  /** Set when this replica lets go of the analysis for another to take over (it drains). */
  private volatile boolean handedOff;
  private volatile boolean quietly;
  /** Set when a write found another replica holding it: nothing more is written, nothing handed back. */
  private volatile boolean lostHold;
  private volatile boolean cancelled;
  private volatile String[] failure;
  private volatile Runnable onCancel = () -> {};
  /** The most events, and characters of events, this analysis records (and holds). */
  private final int maxEvents;
  private final long maxEventChars;
  private long eventChars;
  /** Set once an output or callback event was dropped for the caps: the analysis must end. */
  private volatile boolean capped;
  private Runnable onCapped = () -> {};

  LiveAnalysis(UUID id, UUID tenantId, AnalysisStore store, Clock clock) {
    this(id, tenantId, store, clock, AgentSettings.DEFAULT_MAX_EVENTS, AgentSettings.DEFAULT_MAX_EVENT_CHARS);
  }

  LiveAnalysis(UUID id, UUID tenantId, AnalysisStore store, Clock clock, int maxEvents, long maxEventChars) {
    this(id, tenantId, store, clock, maxEvents, maxEventChars, null, 0, 0);
  }

  /**
   * An analysis taken over from another replica: its events go on after {@code lastSeq}, and the
   * caps count the {@code storedChars} characters of events stored before.
   */
  LiveAnalysis(UUID id, UUID tenantId, AnalysisStore store, Clock clock, int maxEvents, long maxEventChars,
      UUID holder, long lastSeq, long storedChars) {
    this.holder = holder;
    this.nextSeq = lastSeq + 1;
    this.firstSeq = lastSeq + 1;
    this.eventChars = storedChars;
    this.id = id;
    this.tenantId = tenantId;
    this.store = store;
    this.clock = clock;
    this.maxEvents = maxEvents;
    this.maxEventChars = maxEventChars;
  }

  public UUID id() {
    return id;
  }

  public UUID tenantId() {
    return tenantId;
  }

  /**
   * Appends an event; it is written within {@value #LINGER_MS} ms with the events that come
   * meanwhile (at once once {@value #HELD_EVENTS} wait, or at the loop's next {@link #store()}), and
   * handed to the listeners once it is stored: what a follower was sent is in the record, so a
   * replica that takes the analysis over goes on from exactly what its followers saw.
   */
  synchronized AnalysisEvent emit(String type, JsonObject data) {
    if (capped && CAPPED_TYPES.contains(type)) {
      return null;
    }
    AnalysisEvent event = AnalysisEvent.of(nextSeq, type, clock.millis(), data);
    if (CAPPED_TYPES.contains(type)
        && (events.size() + firstSeq - 1 >= maxEvents || eventChars + event.json().length() > maxEventChars)) {
      // Past the caps a cell's output and callbacks are no longer recorded, and the analysis ends
      // (its loop sees eventsCapped()): memory and storage per analysis stay bounded.
      capped = true;
      Runnable action = onCapped;
      try {
        action.run();
      } catch (RuntimeException e) {
        log.warn("analysis {}: stopping its cell at the events cap failed: {}", id, e.toString());
      }
      return null;
    }
    nextSeq++;
    eventChars += event.json().length();
    events.add(event);
    unwritten.add(event);
    if (unwritten.size() >= HELD_EVENTS) {
      writeWanted = true;
      writeIfWanted();
    } else if (!lingering) {
      lingering = true;
      LINGER.schedule(this::lingered, LINGER_MS, java.util.concurrent.TimeUnit.MILLISECONDS);
    }
    return event;
  }

  /** Hands the events up to index {@code upTo} to the listeners, in order. Called with the lock held. */
  private void deliver(int upTo) {
    List<Consumer<AnalysisEvent>> now = List.copyOf(listeners);
    while (delivered < upTo) {
      AnalysisEvent event = events.get(delivered++);
      for (Consumer<AnalysisEvent> listener : now) {
        listener.accept(event);
      }
    }
  }

  private synchronized void lingered() {
    lingering = false;
    writeWanted = true;
    writeIfWanted();
  }

  /**
   * A step that ended and its {@code cell_result} event, under one hold of the lock: they go in the
   * same batch, so that the record holds both or neither (a rebuild tells ended cells by them).
   */
  synchronized void stepEnded(AnalysisStore.StepRecord step, JsonObject resultEvent) {
    unwrittenSteps.add(step);
    emit(AnalysisEvent.CELL_RESULT, resultEvent);
  }

  /** A step that ended, written with the next batch. */
  synchronized void step(AnalysisStore.StepRecord step) {
    unwrittenSteps.add(step);
  }

  /** A callback's answer, written with the next batch (before the step of its cell). */
  synchronized void callback(CallbackRecord record) {
    unwrittenCallbacks.add(record);
  }

  /** The seq of the first event this replica holds of it (1 unless it was taken over). */
  public long firstSeq() {
    return firstSeq;
  }

  /** The usage so far, written with the next batch (a later one replaces it). */
  synchronized void usage(JsonObject usage) {
    unwrittenUsage = usage;
  }

  /**
   * Starts writing all that waits, in one transaction, without waiting for it. The loop calls this
   * as it hands a request to the model, so that a step's end is stored as the next turn begins. One
   * write is in flight at a time, in order.
   */
  synchronized void store() {
    writeWanted = true;
    writeIfWanted();
  }

  /** Called with the lock held. */
  private void writeIfWanted() {
    if (writing || !writeWanted || unwritten.isEmpty() && unwrittenSteps.isEmpty() && unwrittenCallbacks.isEmpty()
        && unwrittenUsage == null) {
      return;
    }
    writing = true;
    writeWanted = false;
    List<AnalysisEvent> batch = unwritten;
    List<AnalysisStore.StepRecord> steps = unwrittenSteps;
    List<CallbackRecord> callbacks = unwrittenCallbacks;
    JsonObject usage = unwrittenUsage;
    unwritten = new ArrayList<>();
    unwrittenSteps = new ArrayList<>();
    unwrittenCallbacks = new ArrayList<>();
    unwrittenUsage = null;
    int upTo = events.size();
    writes = store.progress(tenantId, id, holder, batch, callbacks, steps, usage)
        .onFailure(e -> {
          if (e instanceof AnalysisStore.LostHold) {
            // Another replica carries it on: this one stops, writing (and sending) nothing more.
            log.warn("analysis {}: {}; stopping it here", id, e.getMessage());
            lostHold = true;
            handOff();
            return;
          }
          // Not stored, but sent: a stream must not hang on a record that cannot be written.
          if (writeFailure == null) {
            writeFailure = e;
          }
          log.warn("analysis {}: {} events, {} steps{} not stored: {}", id, batch.size(), steps.size(),
              usage == null ? "" : " and its usage", e.toString());
        })
        .otherwiseEmpty()
        .compose(v -> {
          synchronized (this) {
            if (!lostHold) {
              deliver(upTo);
            }
            writing = false;
            Future<Void> before = writes;
            writeIfWanted();
            return writes == before ? Future.<Void>succeededFuture() : writes;
          }
        });
  }

  /** The first write that failed, if one did. */
  Throwable writeFailure() {
    return writeFailure;
  }

  /** The write in flight (or the last one), without starting one. */
  synchronized Future<Void> writing() {
    return writes;
  }

  /** Writes all that waits and completes when everything so far is stored (or failed and logged). */
  synchronized Future<Void> flushed() {
    store();
    return writes.otherwiseEmpty();
  }

  /** How many streams listen now. */
  public synchronized int followers() {
    return listeners.size();
  }

  /**
   * Sends the events after {@code afterSeq} to the listener, then each new one as it happens.
   * Returns what stops listening.
   */
  public synchronized Runnable listen(long afterSeq, Consumer<AnalysisEvent> listener) {
    for (int i = 0; i < delivered; i++) {
      AnalysisEvent e = events.get(i);
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

  /**
   * Runs {@code action} when the analysis stops here to go on on another replica (at once if it has):
   * a stream following it here ends without a terminal event, for its client to follow it elsewhere.
   * Returns what unregisters it.
   */
  public synchronized Runnable onGone(Runnable action) {
    if (gone) {
      action.run();
      return () -> { };
    }
    onGone.add(action);
    return () -> {
      synchronized (this) {
        onGone.remove(action);
      }
    };
  }

  /**
   * The analysis goes on elsewhere: the streams following it here end, and whoever waits for its end
   * here gets {@code record} (as stored now, still running).
   */
  void gone(JsonObject record) {
    List<Runnable> actions;
    synchronized (this) {
      gone = true;
      actions = List.copyOf(onGone);
      onGone.clear();
    }
    for (Runnable action : actions) {
      try {
        action.run();
      } catch (RuntimeException e) {
        log.warn("analysis {}: ending a stream that followed it here failed: {}", id, e.toString());
      }
    }
    finished.tryComplete(record);
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

  /**
   * Stops the analysis as {@link #cancel()} does, but it ends {@code failed} with this error type
   * and message instead of {@code cancelled} (its tenant was deleted, say).
   */
  public void fail(String errorType, String message) {
    failure = new String[] {errorType, message};
    cancel();
  }

  /**
   * Stops the analysis here as a cancel does, to be handed off to another replica rather than ended
   * (this one drains): its record stays {@code running}, and its loop lets go of it.
   */
  public void handOff() {
    handedOff = true;
    cancel();
  }

  /**
   * As {@link #handOff}, without telling the other replicas to take it at once: a replica that took
   * it over but has no room for its sandbox gives it back for whichever replica looks next (every 2 s).
   */
  void handBackQuietly() {
    quietly = true;
    handOff();
  }

  /** Whether it was handed back without announcing it. */
  boolean handedBackQuietly() {
    return quietly;
  }

  boolean handedOff() {
    return handedOff;
  }

  boolean lostHold() {
    return lostHold;
  }

  UUID holder() {
    return holder;
  }

  /** The error type and message of {@link #fail}, or null after a plain cancel. */
  String[] failure() {
    return failure;
  }

  boolean cancelled() {
    return cancelled;
  }

  /** Whether a cell's output or callback was not recorded for the caps on events (the analysis must end). */
  boolean eventsCapped() {
    return capped;
  }

  int maxEvents() {
    return maxEvents;
  }

  long maxEventChars() {
    return maxEventChars;
  }

  /** What to do (once) when the caps on events are reached: stop the cell. Runs with this analysis' lock held. */
  synchronized void onCapped(Runnable action) {
    this.onCapped = action;
  }

  void onCancel(Runnable action) {
    this.onCancel = action;
    if (cancelled) {
      action.run();
    }
  }
}
