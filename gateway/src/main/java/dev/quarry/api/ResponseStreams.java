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
 * contents, listings), written as their client takes them, never built whole: the next part is read
 * (from a file, or a page from PostgreSQL) only once the connection's write queue has room, so what
 * one answer holds in the gateway is its connection's queue (Netty's high-water mark, 64 KiB) and one
 * part. A client that takes nothing is cut by the one stall watch ({@link SlowClient}); whatever way
 * an answer ends (done, its client gone, cut, a failure), its file is closed and its watch stopped.
 * A failure after the head went out closes the connection at once, so the client sees the answer
 * cut short, never a complete-looking one.
 *
 * <p>Before, such answers were built whole and ended in one write: 200 connections that asked for a
 * 10 MB document's items and read nothing held 2.4 GB of the gateway's heap (issue 33).
 */
final class ResponseStreams {
  private static final Logger LOG = LoggerFactory.getLogger(ResponseStreams.class);
  /** Read from a file at a time: about the connection's queue, so a pause loses little. */
  static final int FILE_READ = 64 * 1024;

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

  /** A part of a paged answer: its bytes, and whether it is the last. */
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
   * Sends an opened file whole ({@code Content-Length} its size, status 200), a part at a time as the
   * client takes it, and closes it. The file is read from the handle it was opened as, so a document
   * written anew meanwhile (a rename over it) does not change what this answer sends.
   */
  void file(RoutingContext ctx, AsyncFile file, long size, String contentType) {
    Run run = new Run(ctx, file::close);
    if (!run.begin()) {
      return;
    }
    HttpServerResponse response = ctx.response();
    response.setStatusCode(200).putHeader(HttpHeaders.CONTENT_TYPE, contentType)
        .putHeader(HttpHeaders.CONTENT_LENGTH, Long.toString(size));
    response.drainHandler(v -> {
      run.slow.drained();
      if (!run.done) {
        file.resume();
      }
    });
    file.setReadBufferSize(FILE_READ);
    file.exceptionHandler(e -> run.failed(e));
    file.endHandler(v -> run.end(null));
    file.handler(bytes -> {
      if (run.done) {
        return;
      }
      run.tracked.fetched.addAndGet(bytes.length());
      response.write(bytes);
      if (response.writeQueueFull()) {
        file.pause();
      }
    });
  }

  /**
   * Writes the parts {@code next} gives, asking for each only once the client has taken the one
   * before (its queue has room): at most one part is read ahead of the client. An answer that is
   * one part goes out as before ({@code Content-Length}); a longer one is chunked. A failure of the
   * first part is answered as any failure ({@code ctx.fail}); a later one cuts the connection.
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
      run.tracked.fetched.addAndGet(piece.bytes().length());
      response.setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, contentType);
      if (piece.last()) {
        run.end(piece.bytes());
        return;
      }
      response.setChunked(true);
      response.write(piece.bytes());
      new PagePump(run, next).more();
    });
  }

  /** The parts after the first: each read once the queue has room for it. */
  private static final class PagePump {
    private final Run run;
    private final Supplier<Future<Piece>> next;
    private boolean reading;

    PagePump(Run run, Supplier<Future<Piece>> next) {
      this.run = run;
      this.next = next;
      run.response.drainHandler(v -> {
        run.slow.drained();
        more();
      });
    }

    void more() {
      if (run.done || reading || run.response.writeQueueFull()) {
        return; // the drain handler asks again
      }
      reading = true;
      next.get().onComplete(ar -> {
        reading = false;
        if (run.done) {
          return;
        }
        if (ar.failed()) {
          run.failed(ar.cause());
          return;
        }
        Piece piece = ar.result();
        run.tracked.fetched.addAndGet(piece.bytes().length());
        if (piece.last()) {
          run.end(piece.bytes());
        } else {
          run.response.write(piece.bytes());
          more();
        }
      });
    }
  }

  /** One answer's life: registered, watched, and released once whichever way it ends. */
  private final class Run {
    final RoutingContext ctx;
    final HttpServerResponse response;
    final Live tracked;
    final Runnable close;
    SlowClient slow;
    boolean done;

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
        LOG.info("{}: the client took nothing for {} s and was cut, {} bytes sent", tracked.what,
            stallLimit.toSeconds(), response.bytesWritten());
        release();
        HardClose.close(ctx.request().connection());
      });
      response.closeHandler(v -> release());
      return true;
    }

    void end(Buffer last) {
      if (done) {
        return;
      }
      release();
      if (last == null) {
        response.end();
      } else {
        response.end(last);
      }
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
      slow.stop();
      live.remove(tracked);
      close.run();
    }
  }
}
