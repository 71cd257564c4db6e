package dev.quarry.api;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.net.impl.ConnectionBase;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The one watch over a response whose client may stop reading: live event streams, replays, and
 * every answer written as its client takes it ({@link ResponseStreams}). A client is taken to read
 * nothing once its response's write queue (Vert.x's, full at 16 writes, in front of Netty's, full at
 * 64 KiB) has been full, never drained in between, for the stall limit; then {@code cut} runs, once. A writer that does not
 * wait for drains (a live stream writes each event as it happens) also asks {@link #behind}: what
 * it wrote behind the full queue, which {@code cut}s it past a ceiling without waiting for the limit.
 *
 * <p>An answer written whole ({@link #watchWritten}) is one write, which leaves Vert.x's queue empty
 * and brings no drain; there a client reading shows as what waits in Netty's buffer going down.
 *
 * <p>The queue is looked at every quarter of the limit, so a client is cut between the limit and
 * 1.25 times it after it stopped. A client that reads slowly still drains the queue now and then
 * (half of what waits: some 100 KiB per stall limit) and is never cut.
 */
final class SlowClient {
  /** How long a client may take nothing of what waits for it before it is cut. */
  static final Duration STALL_LIMIT = Duration.ofSeconds(15);
  /** What may wait for one client of a live stream, beyond its connection's own queue, before it is cut at once. */
  static final long MAX_WAITING_BYTES = 16L << 20;

  /** Answers written whole past this many characters are watched until the kernel has taken them. */
  static final int WATCHED_WHOLE = 64 * 1024;
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(SlowClient.class);

  private final HttpServerResponse response;
  private final Vertx vertx;
  private final AtomicBoolean cut = new AtomicBoolean();
  private long timer;
  private long since;
  /** The bytes written when the queue was first seen full since the last drain; -1 while it keeps up. */
  private long bytes = -1;

  private SlowClient(HttpServerResponse response, Vertx vertx) {
    this.response = response;
    this.vertx = vertx;
  }

  /**
   * Starts watching {@code response}. The caller tells the watch of each drain ({@link #drained}),
   * from the response's drain handler, which it owns, and {@link #stop}s it when the response ends.
   * {@code cut} runs at most once, on the timer's context, after the watch has stopped.
   */
  static SlowClient watch(HttpServerResponse response, Vertx vertx, Duration limit, Runnable cut) {
    SlowClient slow = new SlowClient(response, vertx);
    long period = Math.max(1, limit.toMillis() / 4);
    long nanos = limit.toNanos();
    slow.timer = vertx.setPeriodic(period, period, t -> {
      if (slow.cut.get()) {
        vertx.cancelTimer(t);
      } else if (slow.full() && slow.fullForNanos() >= nanos) {
        slow.cutNow(cut);
      }
    });
    return slow;
  }

  /**
   * Watches an answer written whole until the kernel has taken all of it ({@code written}, its end's
   * future, completes then): its client is cut once what waits for it in the gateway (Netty's buffer)
   * has not gone down for {@code limit}, nothing of it having gone to the kernel meanwhile.
   */
  static void watchWritten(HttpServerResponse response, HttpConnection connection, Future<Void> written,
      Vertx vertx, Duration limit) {
    if (written.isComplete()) {
      return;
    }
    long period = Math.max(1, limit.toMillis() / 4);
    long[] least = {Long.MAX_VALUE};
    long[] since = {System.nanoTime()};
    long timer = vertx.setPeriodic(period, period, t -> {
      if (written.isComplete() || response.closed()) {
        vertx.cancelTimer(t);
        return;
      }
      long waiting = queued(connection);
      if (waiting < least[0] || waiting == 0) {
        least[0] = waiting;
        since[0] = System.nanoTime();
      } else if (System.nanoTime() - since[0] >= limit.toNanos()) {
        vertx.cancelTimer(t);
        LOG.info("an answer of {} bytes whose client took nothing for {} s was cut, {} bytes of it waiting in the"
            + " gateway", response.bytesWritten(), limit.toSeconds(), waiting);
        HardClose.close(connection);
      }
    });
    written.onComplete(done -> vertx.cancelTimer(timer));
  }

  /**
   * What waits in a connection's outbound buffer (Netty's), not yet taken by the kernel; -1 when not
   * known. The buffer counts a write as pending until all of it is out; the kernel's progress through
   * the current one is taken off here, so that a client reading a single large write shows.
   */
  static long queued(HttpConnection connection) {
    if (connection instanceof ConnectionBase base) {
      var out = base.channel().unsafe().outboundBuffer();
      return out == null ? 0 : out.totalPendingWriteBytes() - out.currentProgress();
    }
    return -1;
  }

  /** Cuts at once (a writer that found too much behind the full queue); false when it was cut or stopped already. */
  boolean cutNow(Runnable cut) {
    if (!this.cut.compareAndSet(false, true)) {
      return false;
    }
    vertx.cancelTimer(timer);
    cut.run();
    return true;
  }

  /** The response ended or its client went: nothing more to watch. */
  void stop() {
    if (cut.compareAndSet(false, true)) {
      vertx.cancelTimer(timer);
    }
  }

  /** The client took what waited: the queue is below its low-water mark again. */
  synchronized void drained() {
    bytes = -1;
  }

  /** Whether the queue is full now; the first time since a drain marks when and at how many bytes. */
  synchronized boolean full() {
    if (!response.writeQueueFull()) {
      return false;
    }
    if (bytes < 0) {
      bytes = response.bytesWritten();
      since = System.nanoTime();
    }
    return true;
  }

  /** How long the queue has been full without draining, in nanoseconds; 0 while it keeps up. */
  synchronized long fullForNanos() {
    return bytes < 0 ? 0 : System.nanoTime() - since;
  }

  /** What has been written behind the full queue since it filled; 0 while it keeps up. */
  synchronized long behind() {
    return bytes < 0 ? 0 : response.bytesWritten() - bytes;
  }
}
