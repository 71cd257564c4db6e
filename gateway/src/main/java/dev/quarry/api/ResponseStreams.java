package dev.quarry.api;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.file.AsyncFile;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers whose size stored data or an input drives (a document's items, content and table of
 * contents, listings, replays), written as their client takes them, never built whole: the next
 * part is read (from a file, or a page from PostgreSQL) only once the one before is out and the
 * connection's queue has room. What one answer holds in the gateway is about one part and its
 * connection's queues: Vert.x's, which is full at 16 writes whatever their size (so parts go out in
 * slices of {@value #SLICE} bytes), and Netty's, full at 64 KiB. A client that takes nothing is cut
 * by the one stall watch ({@link SlowClient}); whichever way an answer ends (done, its client gone,
 * cut, a failure), its source is closed and its watch stopped. A failure after the head went out
 * closes the connection at once, so the client sees the answer cut short, never a complete one.
 *
 * <p>Before, such answers were built whole and ended in one write: 200 connections that asked for a
 * 10 MB document's items and read nothing held gigabytes of the gateway's heap (issue 33).
 */
final class ResponseStreams {
  private static final Logger LOG = LoggerFactory.getLogger(ResponseStreams.class);
  /** Read from a file at a time. */
  static final int FILE_READ = 64 * 1024;
  /**
   * The most one write hands Vert.x: its queue in front of Netty's holds 16 writes whatever their
   * size, so 16 slices of this, 128 KiB, is the most that waits there for a client that reads nothing.
   */
  static final int SLICE = 8 * 1024;

  /** One answer under way: what it has taken from its source so far. */
  static final class Live {
    private final String what;
    private final AtomicLong fetched = new AtomicLong();

    private Live(String what) {
      this.what = what;
    }

    /** The request, as "GET /path". */
    String what() {
      return what;
    }

    /** Bytes read from the answer's source (file or pages) so far. */
    long fetched() {
      return fetched.get();
    }
  }

  /** A part of an answer: its bytes, and whether it is the last. */
  record Piece(Buffer bytes, boolean last) {}

  private final Vertx vertx;
  private final Duration stallLimit;
  private final Set<Live> live = ConcurrentHashMap.newKeySet();

  ResponseStreams(Vertx vertx) {
    this(vertx, SlowClient.STALL_LIMIT);
  }

  ResponseStreams(Vertx vertx, Duration stallLimit) {
    this.vertx = vertx;
    this.stallLimit = stallLimit;
  }

  /** The answers being written now. */
  List<Live> live() {
    return List.copyOf(live);
  }

  /**
   * Sends an opened file whole ({@code Content-Length} its size, status 200), {@value #FILE_READ}
   * bytes at a time as the client takes them, and closes it. The file is read from the handle it was
   * opened as, so a document written anew meanwhile (a rename over it) does not change this answer.
   */
  void file(RoutingContext ctx, AsyncFile file, long size, String contentType) {
    Run run = new Run(ctx, () -> UploadBody.closeQuietly(file));
    if (!run.begin()) {
      return;
    }
    ctx.response().setStatusCode(200).putHeader(HttpHeaders.CONTENT_TYPE, contentType)
        .putHeader(HttpHeaders.CONTENT_LENGTH, Long.toString(size));
    long[] position = {0};
    run.pump(() -> {
      int length = (int) Math.min(FILE_READ, size - position[0]);
      if (length == 0) {
        return Future.succeededFuture(new Piece(Buffer.buffer(), true));
      }
      return file.read(Buffer.buffer(length), 0, position[0], length).map(read -> {
        if (read.length() == 0) {
          throw new IllegalStateException("the file ended at " + position[0] + " of its " + size + " bytes");
        }
        position[0] += read.length();
        return new Piece(read, position[0] >= size);
      });
    }, null);
  }

  /**
   * Writes the parts {@code next} gives, asking for each only once the one before is out and the
   * client's queue has room: at most one part is read ahead of the client. An answer that is one
   * part goes out as before ({@code Content-Length}, unless the caller made the response chunked); a
   * longer one is chunked. A failure of the first part is answered as any failure ({@code ctx.fail});
   * a later one cuts the connection.
   */
  void pages(RoutingContext ctx, int status, String contentType, Supplier<Future<Piece>> next) {
    Run run = new Run(ctx, () -> { });
    if (!run.begin()) {
      return;
    }
    HttpServerResponse response = ctx.response();
    next.get().onComplete(first -> {
      if (run.done) {
        return;
      }
      if (first.failed()) {
        run.release();
        ctx.fail(first.cause());
        return;
      }
      Piece piece = first.result();
      response.setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, contentType);
      if (!piece.last()) {
        response.setChunked(true);
      } else if (!response.isChunked()) {
        response.putHeader(HttpHeaders.CONTENT_LENGTH, Integer.toString(piece.bytes().length()));
      }
      run.pump(next, piece);
    });
  }

  /** One answer's life: registered, watched, pumped, and released once whichever way it ends. */
  private final class Run {
    final RoutingContext ctx;
    final HttpServerResponse response;
    final Live tracked;
    final Runnable close;
    SlowClient slow;
    boolean done;
    private Supplier<Future<Piece>> next;
    /** The part being written, how much of it is out, and whether it is the last. */
    private Buffer part;
    private int at;
    private boolean lastPart;
    private boolean reading;

    Run(RoutingContext ctx, Runnable close) {
      this.ctx = ctx;
      this.response = ctx.response();
      this.tracked = new Live(ctx.request().method() + " " + ctx.request().path());
      this.close = close;
    }

    /** False (and released) when the client has gone already. */
    boolean begin() {
      if (response.closed()) {
        done = true;
        close.run();
        return false;
      }
      live.add(tracked);
      slow = SlowClient.watch(response, vertx, stallLimit, () -> {
        LOG.info("{}: the client took nothing for {} s and was cut, {} bytes sent, {} of them waiting in"
            + " the gateway", tracked.what, stallLimit.toSeconds(), response.bytesWritten(),
            SlowClient.queued(ctx.request().connection()));
        release();
        HardClose.close(ctx.request().connection());
      });
      response.closeHandler(v -> release());
      return true;
    }

    /** Writes every part {@code next} gives, from {@code first} when it was read already. */
    void pump(Supplier<Future<Piece>> next, Piece first) {
      this.next = next;
      response.drainHandler(v -> {
        slow.drained();
        more();
      });
      if (first == null) {
        more();
      } else {
        take(first);
      }
    }

    private void take(Piece piece) {
      tracked.fetched.addAndGet(piece.bytes().length());
      part = piece.bytes();
      at = 0;
      lastPart = piece.last();
      more();
    }

    /**
     * Writes what it can of the part, a slice at a time, while the queue has room; ends after the
     * last part, or reads the next once this one is out and the queue still has room. Otherwise the
     * drain handler comes back here.
     */
    private void more() {
      if (done || reading) {
        return;
      }
      while (part != null && at < part.length() && !response.writeQueueFull()) {
        int end = Math.min(part.length(), at + SLICE);
        response.write(part.slice(at, end));
        at = end;
      }
      if (part != null && at < part.length()) {
        return;
      }
      if (lastPart) {
        end();
        return;
      }
      if (response.writeQueueFull()) {
        return;
      }
      part = null;
      reading = true;
      next.get().onComplete(ar -> {
        reading = false;
        if (done) {
          return;
        }
        if (ar.failed()) {
          failed(ar.cause());
          return;
        }
        take(ar.result());
      });
    }

    private void end() {
      if (done) {
        return;
      }
      release();
      response.end();
    }

    void failed(Throwable e) {
      if (done) {
        return;
      }
      LOG.warn("{}: writing the answer failed midway, the connection is cut: {}", tracked.what, e.toString());
      release();
      HardClose.close(ctx.request().connection());
    }

    void release() {
      if (done) {
        return;
      }
      done = true;
      part = null;
      slow.stop();
      live.remove(tracked);
      close.run();
    }
  }
}
