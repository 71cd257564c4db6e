package dev.quarry.api;

import dev.quarry.agent.AnalysisEvent;
import dev.quarry.agent.AnalysisStore;
import dev.quarry.agent.EventWakeups;
import io.vertx.core.AsyncResult;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An analysis' events followed through the store, live: for an analysis that runs on another
 * replica (or has only just ended). The events are read from {@code analysis_events} by seq, after
 * the last one sent, a page at a time, so none is missed, sent twice or out of order whatever the
 * wake-ups do; a read is started by a wake-up (the running replica announces each write of events:
 * {@link EventWakeups}), and every {@link #POLL} in case one went unheard. The stream ends after
 * the terminal event; or, without one, once the analysis is gone (its tenant deleted) or ended more
 * than {@link #SETTLED} ago (its end was recorded but its terminal event never stored).
 *
 * <p>A page is read only once the client has taken the one before (the connection's queue has
 * room): a follower that stops reading costs the gateway at most a page, and is cut after
 * {@link SlowClient#STALL_LIMIT} like any other stream. All its state lives on the request's
 * context.
 */
final class StoredFollow {
  private static final Logger log = LoggerFactory.getLogger(StoredFollow.class);
  /** How often a follower reads anyway: the bound on its delay when a wake-up is lost. */
  static final Duration POLL = Duration.ofSeconds(2);
  /** How long after an analysis' end its stored events may still grow (its terminal event comes after its end). */
  static final Duration SETTLED = Duration.ofSeconds(10);
  /** Reads in a row that may fail (the database away) before the stream is cut. */
  static final int MAX_FAILED_READS = 15;

  private final RoutingContext ctx;
  private final HttpServerResponse response;
  private final Vertx vertx;
  private final Context context;
  private final AnalysisStore store;
  private final EventWakeups wakeups;
  private final UUID tenant;
  private final UUID id;
  private final Duration heartbeat;
  private final Runnable stopped;
  private long after;
  private boolean reading;
  /** A wake-up or a poll came while a read was under way: read again after it. */
  private boolean again;
  /** The next read that finds nothing asks where the analysis stands. */
  private boolean askProgress;
  /** The analysis has settled: the next read that finds nothing ends the stream. */
  private boolean lastRead;
  private boolean ended;
  private int failures;
  private Runnable unregister = () -> { };
  private long timer = -1;
  private SlowClient slow;

  /**
   * @param afterSeq the last seq the client has (its Last-Event-ID; 0: from the first)
   * @param stopped  runs once when the stream stops, whichever way
   */
  StoredFollow(RoutingContext ctx, AnalysisStore store, EventWakeups wakeups, UUID tenant, UUID id, long afterSeq,
      Duration heartbeat, Runnable stopped) {
    this.ctx = ctx;
    this.response = ctx.response();
    this.vertx = ctx.vertx();
    this.context = vertx.getOrCreateContext();
    this.store = store;
    this.wakeups = wakeups;
    this.tenant = tenant;
    this.id = id;
    this.after = afterSeq;
    this.heartbeat = heartbeat;
    this.stopped = stopped;
  }

  /** Opens the stream and sends what is stored, then what is stored next, until the end. On the request's context. */
  void start() {
    if (response.closed()) {
      stop();
      return;
    }
    EventStream.open(response, vertx, heartbeat).putHeader("X-Analysis-Id", id.toString());
    slow = SlowClient.watch(response, vertx, SlowClient.STALL_LIMIT, () -> context.runOnContext(v -> {
      log.info("analysis {}: a stream of its stored events whose client stopped reading was cut", id);
      stop();
      HardClose.close(ctx.request().connection());
    }));
    response.drainHandler(v -> {
      slow.drained();
      pull();
    });
    response.closeHandler(v -> stop());
    unregister = wakeups.register(id, lastSeq -> context.runOnContext(v -> {
      if (lastSeq < 0 || lastSeq > after) {
        pull();
      }
    }));
    timer = vertx.setPeriodic(POLL.toMillis(), POLL.toMillis(), t -> {
      askProgress = true;
      pull();
    });
    pull();
  }

  /** Reads the next page, unless a read is under way (then again after it) or the client's queue is full (then on its drain). */
  private void pull() {
    if (ended) {
      return;
    }
    if (reading) {
      again = true;
      return;
    }
    if (response.writeQueueFull()) {
      return;
    }
    reading = true;
    again = false;
    boolean ask = askProgress;
    askProgress = false;
    store.events(tenant, id, after, AnalysisRoutes.REPLAY_PAGE, AnalysisRoutes.REPLAY_PAGE_BYTES)
        .onComplete(ar -> context.runOnContext(v -> read(ar, ask)));
  }

  private void read(AsyncResult<List<AnalysisEvent>> ar, boolean ask) {
    reading = false;
    if (ended) {
      return;
    }
    if (ar.failed()) {
      failed(ar.cause());
      return;
    }
    failures = 0;
    List<AnalysisEvent> page = ar.result();
    long bytes = 0;
    for (AnalysisEvent e : page) {
      if (e.seq() <= after) {
        continue; // the query reads after `after` only; never sent twice whatever it returns
      }
      response.write(e.sse());
      after = e.seq();
      bytes += AnalysisRoutes.utf8Length(e.json());
      if (e.terminal()) {
        stop();
        if (!response.ended() && !response.closed()) {
          response.end();
        }
        return;
      }
    }
    boolean full = page.size() >= AnalysisRoutes.REPLAY_PAGE || bytes >= AnalysisRoutes.REPLAY_PAGE_BYTES;
    if (full || again) {
      pull();
    } else if (page.isEmpty() && lastRead) {
      end();
    } else if (page.isEmpty() && ask) {
      askProgress();
    }
  }

  /** Whether the analysis is gone, or settled without a terminal event stored: then the stream ends. */
  private void askProgress() {
    reading = true;
    store.progress(tenant, id, SETTLED).onComplete(ar -> context.runOnContext(v -> {
      reading = false;
      if (ended) {
        return;
      }
      if (ar.failed()) {
        failed(ar.cause());
        return;
      }
      Optional<AnalysisStore.Progress> progress = ar.result();
      if (progress.isEmpty()) {
        end(); // its tenant was deleted, and its rows with it
        return;
      }
      if (!progress.get().running() && progress.get().settled()) {
        // One more read: what was stored before the look is sent, then the stream ends.
        lastRead = true;
        again = true;
      }
      if (again) {
        pull();
      }
    }));
  }

  private void failed(Throwable e) {
    failures++;
    if (failures >= MAX_FAILED_READS) {
      log.warn("analysis {}: reading its stored events failed {} times in a row, the stream is cut: {}", id,
          failures, e.toString());
      stop();
      HardClose.close(ctx.request().connection());
      return;
    }
    log.debug("analysis {}: reading its stored events failed, tried again at the next poll: {}", id, e.toString());
  }

  /** Ends the stream without a terminal event (there will be none). */
  private void end() {
    stop();
    if (!response.ended() && !response.closed()) {
      response.end();
    }
  }

  /** Stops reading and listening, once. */
  private void stop() {
    if (ended) {
      return;
    }
    ended = true;
    unregister.run();
    if (timer >= 0) {
      vertx.cancelTimer(timer);
    }
    if (slow != null) {
      slow.stop();
    }
    stopped.run();
  }
}
