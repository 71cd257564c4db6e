package dev.quarry.api;

import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.file.AsyncFile;
import io.vertx.core.file.OpenOptions;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A request body that may be large (a document sent as JSON, up to the upload limit) kept in memory
 * up to {@link #IN_MEMORY} bytes and, past that, written to a file of its own under the uploads
 * directory as it arrives, with back-pressure: the request is paused while the file's writes catch
 * up. So a body held open costs the gateway a small constant of heap, not its size: 32 JSON bodies of
 * 49 MiB held open took the gateway from 0.7 to 2.8 GB (issue 33). The handler that follows reads it
 * with a streaming parser ({@link #received}).
 *
 * <p>The limit, the body timeout and the file's deletion on every path (the response ends, the
 * client goes, an error, the timeout; files a crash left behind are swept with the uploads) are as
 * {@link UploadBody}'s, whose directory, names and sweep this shares.
 */
final class SpooledBody implements Handler<RoutingContext> {
  private static final Logger log = LoggerFactory.getLogger(SpooledBody.class);
  private static final String KEY = "quarry.spooledBody";
  /** A body up to this size stays in memory. */
  static final int IN_MEMORY = 64 * 1024;

  /** A body that has all arrived: in memory, or in its file. */
  record Received(Buffer memory, Path file, long length) {
    /** Reads it from the start; blocking when it is in a file. */
    InputStream open() throws IOException {
      return file == null ? new ByteArrayInputStream(memory.getBytes()) : Files.newInputStream(file);
    }
  }

  private final Vertx vertx;
  private final long limit;
  private final Path dir;
  private final long timeoutMs;

  SpooledBody(Vertx vertx, long limit, Path dir, long timeoutMs) {
    this.vertx = vertx;
    this.limit = limit;
    this.dir = dir;
    this.timeoutMs = timeoutMs;
  }

  /** The body of a request this handler admitted, or null. */
  static Received received(RoutingContext ctx) {
    Spool spool = ctx.get(KEY);
    return spool == null ? null : spool.received;
  }

  /** Deletes the request's body file (if any); completes once it is gone. Safe to call again. */
  static Future<Void> discard(RoutingContext ctx) {
    Spool spool = ctx.get(KEY);
    return spool == null ? Future.succeededFuture() : spool.discard();
  }

  @Override
  public void handle(RoutingContext ctx) {
    ctx.put(LimitedBody.LIMIT_KEY, limit);
    String length = ctx.request().getHeader(HttpHeaders.CONTENT_LENGTH);
    if (length != null && length.chars().allMatch(Character::isDigit) && length.length() < 19
        && Long.parseLong(length) > limit) {
      ctx.response().putHeader(HttpHeaders.CONNECTION, "close");
      ctx.fail(tooLarge(ctx.request()));
      return;
    }
    new Spool(ctx).start();
  }

  private ApiError tooLarge(HttpServerRequest request) {
    return new ApiError(413, "too_large", "the request body is larger than the limit of "
        + LimitedBody.describe(limit) + " for " + request.method() + " " + request.path());
  }

  /** One request's body: its state, its file, its clean-up. Runs on the request's event loop. */
  private final class Spool {
    private final RoutingContext ctx;
    private final HttpServerRequest request;
    private Buffer memory = Buffer.buffer();
    private Path path;
    private AsyncFile file;
    private long bytes;
    private long timer = -1;
    private boolean done;
    private Future<Void> discarded;
    Received received;

    Spool(RoutingContext ctx) {
      this.ctx = ctx;
      this.request = ctx.request();
    }

    void start() {
      ctx.put(KEY, this);
      // Whichever comes first: the response ends, or the client goes away. Both delete the file.
      ctx.addEndHandler(v -> discard());
      request.connection().closeHandler(v -> {
        finish();
        discard();
      });
      if (request.isEnded()) {
        ended();
        return;
      }
      timer = vertx.setTimer(timeoutMs, id -> {
        timer = -1;
        refuse(LimitedBody.timedOut(timeoutMs));
      });
      request.handler(this::arrived);
      request.exceptionHandler(e -> refuse(e));
      request.endHandler(v -> ended());
      request.resume();
    }

    private void arrived(Buffer buffer) {
      if (done) {
        return;
      }
      bytes += buffer.length();
      if (bytes > limit) {
        refuse(tooLarge(request));
        return;
      }
      if (file == null && memory.length() + buffer.length() <= IN_MEMORY) {
        memory.appendBuffer(buffer);
        return;
      }
      if (file == null && !openFile()) {
        return;
      }
      file.write(buffer);
      if (file.writeQueueFull()) {
        request.pause();
        // A file's drain handler is called once and then forgotten: set again at each pause.
        file.drainHandler(v -> request.resume());
      }
    }

    /**
     * Moves what is in memory to a new file. Opened at once (a local create, on the event loop) so
     * that the body's next bytes find it there, in order.
     */
    private boolean openFile() {
      path = UploadBody.newPath(dir);
      try {
        file = vertx.fileSystem().openBlocking(path.toString(), new OpenOptions().setCreateNew(true).setWrite(true));
      } catch (RuntimeException e) {
        log.warn("cannot spool a request body to {}: {}", path, e.toString());
        path = null;
        refuse(new ApiError(503, "upload_unavailable", "the request body could not be stored on the gateway;"
            + " retry shortly"));
        return false;
      }
      file.exceptionHandler(e -> refuse(e));
      file.write(memory);
      memory = null;
      return true;
    }

    private void ended() {
      if (done) {
        return;
      }
      finish();
      Future<Void> written = file == null ? Future.succeededFuture() : file.end();
      written.onComplete(ar -> {
        if (ar.failed()) {
          log.warn("cannot spool a request body to {}: {}", path, ar.cause().toString());
          discard().onComplete(v -> ctx.fail(new ApiError(503, "upload_unavailable",
              "the request body could not be stored on the gateway; retry shortly")));
          return;
        }
        received = new Received(memory, path, bytes);
        ctx.next();
      });
    }

    private void finish() {
      done = true;
      if (timer >= 0) {
        vertx.cancelTimer(timer);
        timer = -1;
      }
    }

    /**
     * Fails the request once. A body not all read (over the limit, past the timeout, a write
     * failure) closes its connection once the answer is out: the rest is never read.
     */
    private void refuse(Throwable e) {
      if (done) {
        return;
      }
      finish();
      if (!request.isEnded()) {
        ctx.response().putHeader(HttpHeaders.CONNECTION, "close");
        ctx.addEndHandler(v -> request.connection().close());
      }
      discard().onComplete(v -> ctx.fail(e));
    }

    /** Closes and deletes the body's file, if it has one. */
    Future<Void> discard() {
      if (discarded != null) {
        return discarded;
      }
      memory = null;
      if (path == null) {
        discarded = Future.succeededFuture();
        return discarded;
      }
      String spooled = path.toString();
      discarded = UploadBody.closeQuietly(file).transform(closed -> vertx.fileSystem().delete(spooled))
          .otherwiseEmpty();
      return discarded;
    }
  }
}
