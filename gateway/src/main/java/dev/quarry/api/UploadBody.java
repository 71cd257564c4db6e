package dev.quarry.api;

import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.MultiMap;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.file.AsyncFile;
import io.vertx.core.file.OpenOptions;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerFileUpload;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The body of {@code POST /v1/documents} as multipart/form-data: one file in the field {@code file},
 * optional fields {@code uri} and {@code title}, spooled to a file of its own under the uploads
 * directory. Every malformed body gets a 4xx naming the problem; a body that has not all arrived
 * within the body timeout gets a 408 and its connection closed; and the spooled file is deleted on
 * every path: when the handler is done with it, on any error, when the client goes away, at the
 * timeout. Files a crash left behind are swept by {@link #sweep}.
 *
 * <p>Other content types pass to {@code otherwise} (the JSON form of an ingest).
 */
final class UploadBody implements Handler<RoutingContext> {
  private static final Logger log = LoggerFactory.getLogger(UploadBody.class);
  private static final String KEY = "quarry.upload";
  private static final String FILE_FIELD = "file";
  private static final Set<String> FIELDS = Set.of("uri", "title");
  private static final String PREFIX = "upload-";
  private static final SecureRandom RANDOM = new SecureRandom();
  /** RFC 2046: 1 to 70 characters of bchars, the last not a space. */
  private static final Pattern BOUNDARY = Pattern.compile("[0-9A-Za-z'()+_,./:=? -]{0,69}[0-9A-Za-z'()+_,./:=?-]");
  private static final Pattern BOUNDARY_PARAM =
      Pattern.compile(";\\s*boundary\\s*=\\s*(\"([^\"]*)\"|[^;\\s]*)", Pattern.CASE_INSENSITIVE);
  private static final String SHAPE = "each part needs 'Content-Disposition: form-data; name=\"...\"', parts are"
      + " separated by '--' and the boundary, and the body ends with '--' boundary '--'";

  /** What a complete upload left for the handler: the spooled file and the form's fields. */
  record Received(Path file, String fileName, String contentType, MultiMap fields) {}

  private final Vertx vertx;
  private final long limit;
  private final Path dir;
  private final long timeoutMs;
  private final Handler<RoutingContext> otherwise;

  UploadBody(Vertx vertx, long limit, Path dir, long timeoutMs, Handler<RoutingContext> otherwise) {
    this.vertx = vertx;
    this.limit = limit;
    this.dir = dir;
    this.timeoutMs = timeoutMs;
    this.otherwise = otherwise;
  }

  static boolean isMultipart(String contentType) {
    return contentType != null && contentType.toLowerCase(Locale.ROOT).startsWith("multipart/");
  }

  /** The upload of a request this handler admitted, or null when it was not multipart. */
  static Received received(RoutingContext ctx) {
    Spool spool = ctx.get(KEY);
    return spool == null ? null : spool.received;
  }

  /** Deletes the request's spooled file (if any); completes once it is gone. Safe to call again. */
  static Future<Void> discard(RoutingContext ctx) {
    Spool spool = ctx.get(KEY);
    return spool == null ? Future.succeededFuture() : spool.discard();
  }

  @Override
  public void handle(RoutingContext ctx) {
    String contentType = ctx.request().getHeader(HttpHeaders.CONTENT_TYPE);
    if (!isMultipart(contentType)) {
      otherwise.handle(ctx);
      return;
    }
    ctx.put(LimitedBody.LIMIT_KEY, limit);
    if (!contentType.toLowerCase(Locale.ROOT).startsWith("multipart/form-data")) {
      ctx.fail(new ApiError(415, "unsupported_media_type", "a multipart upload must be multipart/form-data;"
          + " got Content-Type '" + printable(contentType) + "'"));
      return;
    }
    String length = ctx.request().getHeader(HttpHeaders.CONTENT_LENGTH);
    if (length != null && length.chars().allMatch(Character::isDigit) && length.length() < 19
        && Long.parseLong(length) > limit) {
      ctx.response().putHeader(HttpHeaders.CONNECTION, "close");
      ctx.fail(new ApiError(413, "too_large", "the request body is larger than the limit of "
          + LimitedBody.describe(limit) + " for " + ctx.request().method() + " " + ctx.request().path()));
      return;
    }
    String problem = boundaryProblem(contentType);
    if (problem != null) {
      ctx.fail(ApiError.badRequest("invalid_multipart", problem));
      return;
    }
    try {
      new Spool(ctx, boundary(contentType)).start();
    } catch (IllegalArgumentException e) {
      // The decoder is made from the Content-Type at once: an unknown charset fails here.
      ctx.fail(ApiError.badRequest("invalid_multipart", "Content-Type '" + printable(contentType)
          + "' cannot be decoded (an unknown charset?)"));
    }
  }

  private static String boundary(String contentType) {
    Matcher m = BOUNDARY_PARAM.matcher(contentType);
    m.find();
    return m.group(2) != null ? m.group(2) : m.group(1);
  }

  /** Why the Content-Type's boundary is unusable, or null. */
  static String boundaryProblem(String contentType) {
    Matcher m = BOUNDARY_PARAM.matcher(contentType);
    if (!m.find()) {
      return "Content-Type multipart/form-data needs a boundary parameter, e.g. 'multipart/form-data; boundary=x1'";
    }
    String boundary = boundary(contentType);
    if (!BOUNDARY.matcher(boundary).matches()) {
      return "the multipart boundary must be 1 to 70 letters, digits or '()+_,-./:=? (not ending in a space)";
    }
    return null;
  }

  /** One request's upload: its state, its file, its clean-up. Runs on the request's event loop. */
  private final class Spool {
    private final RoutingContext ctx;
    private final HttpServerRequest request;
    /** The body must end with this (then only line breaks or spaces): the close delimiter. */
    private final byte[] close;
    /** The body's last bytes, enough to see its close delimiter. */
    private final byte[] tail;
    private int tailLength;
    private final List<Future<AsyncFile>> opened = new ArrayList<>();
    private final List<Path> files = new ArrayList<>();
    private Future<Void> written = Future.succeededFuture();
    private HttpServerFileUpload part;
    private boolean done;
    /** Refused before the body ended: the rest is read and dropped, then the connection closes. */
    private boolean draining;
    private long bytes;
    private long timer = -1;
    private Future<Void> discarded;
    Received received;

    Spool(RoutingContext ctx, String boundary) {
      this.ctx = ctx;
      this.request = ctx.request();
      this.close = ("--" + boundary + "--").getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
      this.tail = new byte[close.length + 64];
    }

    private void keepTail(io.vertx.core.buffer.Buffer buffer) {
      int n = buffer.length();
      if (n >= tail.length) {
        buffer.getBytes(n - tail.length, n, tail, 0);
        tailLength = tail.length;
        return;
      }
      int keep = Math.min(tailLength, tail.length - n);
      System.arraycopy(tail, tailLength - keep, tail, 0, keep);
      buffer.getBytes(0, n, tail, keep);
      tailLength = keep + n;
    }

    /** Whether the body ended with its close delimiter, followed by nothing but whitespace. */
    private boolean closed() {
      int end = tailLength;
      while (end > 0 && (tail[end - 1] == '\r' || tail[end - 1] == '\n' || tail[end - 1] == ' ' || tail[end - 1] == '\t')) {
        end--;
      }
      return end >= close.length
          && java.util.Arrays.equals(tail, end - close.length, end, close, 0, close.length);
    }

    void start() {
      ctx.put(KEY, this);
      // Whichever comes first: the response ends, or the client goes away. Both delete the file.
      ctx.addEndHandler(v -> discard());
      request.connection().closeHandler(v -> {
        discard();
        finish();
        draining = false;
      });
      request.setExpectMultipart(true);
      request.uploadHandler(this::part);
      request.handler(buffer -> {
        bytes += buffer.length();
        keepTail(buffer);
        if (bytes > limit) {
          refuseAndClose(new ApiError(413, "too_large", "the request body is larger than the limit of "
              + LimitedBody.describe(limit) + " for " + request.method() + " " + request.path()));
        }
      });
      request.exceptionHandler(e -> refuse(malformed(e)));
      request.endHandler(v -> ended());
      timer = vertx.setTimer(timeoutMs, id -> {
        timer = -1;
        refuseAndClose(LimitedBody.timedOut(timeoutMs));
      });
    }

    private void part(HttpServerFileUpload upload) {
      String name = upload.name();
      if (done) {
        // Refused already, or the client went away: the part is dropped below.
      } else if (name == null || name.isEmpty()) {
        refuse(ApiError.badRequest("invalid_multipart", "a file part has no name; " + SHAPE));
      } else if (!name.equals(FILE_FIELD)) {
        refuse(ApiError.badRequest("unexpected_file", "file part '" + printable(name) + "': an upload takes"
            + " one file, in the field 'file' (other fields: uri, title)"));
      } else if (part != null) {
        refuse(ApiError.badRequest("unexpected_file", "more than one file in the field 'file'; send one"
            + " document per request"));
      } else {
        part = upload;
        spoolTo(upload);
      }
      if (done) {
        upload.handler(b -> { }).resume();
      }
    }

    /**
     * Writes the part to a new file, with back-pressure. The file is opened at once (a local create,
     * on the event loop) so that the part's data and end come to handlers already in place, in order.
     */
    private void spoolTo(HttpServerFileUpload upload) {
      Path path = newPath(dir);
      files.add(path);
      AsyncFile file;
      try {
        file = vertx.fileSystem().openBlocking(path.toString(), new OpenOptions().setCreateNew(true).setWrite(true));
      } catch (RuntimeException e) {
        opened.add(Future.failedFuture(e));
        log.warn("cannot spool an upload to {}: {}", path, e.toString());
        refuse(new ApiError(503, "upload_unavailable", "the upload could not be stored on the gateway; retry shortly"));
        return;
      }
      opened.add(Future.succeededFuture(file));
      // No pause of the part: pausing it while the file's writes drained lost the part's end when the
      // request ended meanwhile (by hand and through pipeTo alike), and good uploads hung or were
      // refused as unclosed. The queued writes are bounded by the upload limit, which the request
      // handler enforces on the raw bytes.
      Promise<Void> end = Promise.promise();
      written = end.future();
      upload.handler(file::write);
      upload.exceptionHandler(e -> refuse(malformed(e)));
      upload.endHandler(v -> file.end().onComplete(end));
    }

    private void ended() {
      if (draining) {
        closeAfterAnswer(); // the refused body has all been read: the connection closes cleanly
        return;
      }
      if (done) {
        return;
      }
      // Only the close delimiter decides here. The file part may not have ended yet: when its file's
      // write queue filled, the part was paused, and its last data and end come once the writes drain;
      // `written` below waits for that. (Refusing a part still under way refused good uploads at random.)
      if (!closed()) {
        refuse(ApiError.badRequest("invalid_multipart", "the multipart body does not end with its"
            + " closing boundary ('--' boundary '--'); " + SHAPE));
        return;
      }
      for (String field : request.formAttributes().names()) {
        if (!FIELDS.contains(field)) {
          refuse(ApiError.badRequest("unknown_field", "multipart field '" + printable(field) + "' is not part"
              + " of an upload (file, uri, title)"));
          return;
        }
        if (request.formAttributes().getAll(field).stream().anyMatch(v -> v.indexOf('\0') >= 0)) {
          refuse(ApiError.badRequest("nul_character", "multipart field '" + field + "' contains a NUL character,"
              + " which no text field can hold"));
          return;
        }
      }
      if (part != null && part.filename() != null && part.filename().indexOf('\0') >= 0) {
        refuse(ApiError.badRequest("nul_character", "the file name contains a NUL character, which no text"
            + " field can hold"));
        return;
      }
      if (part == null) {
        refuse(ApiError.badRequest("missing_file",
            "multipart field 'file' is missing; send the document as a file field named 'file'"));
        return;
      }
      written.onComplete(all -> {
        if (done) {
          return;
        }
        if (all.failed()) {
          refuse(all.cause());
          return;
        }
        finish();
        received = new Received(files.get(0), part.filename(), part.contentType(), request.formAttributes());
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
     * Fails the request once, answering at once. When the body has not ended, the rest of it is still
     * read, and dropped, before the connection closes: closing with part of a body unread or still
     * coming makes the kernel reset the connection, and a client still writing loses the answer (seen
     * as "connection closed"). Reading on ends with the body, or at the upload limit or the body
     * timeout, which close at once ({@link #refuseAndClose}).
     */
    private void refuse(Throwable e) {
      if (done) {
        return;
      }
      if (request.isEnded()) {
        finish();
      } else {
        done = true; // the body timeout keeps running: it bounds the reading on
        draining = true;
        ctx.response().putHeader(HttpHeaders.CONNECTION, "close");
      }
      discard().onComplete(v -> ctx.fail(e));
    }

    /** Over the upload limit or past the body timeout: answers (if not yet), and closes without reading on. */
    private void refuseAndClose(Throwable e) {
      if (draining) {
        closeAfterAnswer();
        return;
      }
      if (done) {
        return;
      }
      finish();
      if (!request.isEnded()) {
        ctx.response().putHeader(HttpHeaders.CONNECTION, "close");
        closeAfterAnswer();
      }
      discard().onComplete(v -> ctx.fail(e));
    }

    /** Closes the connection once the answer has gone out (at once if it has). */
    private void closeAfterAnswer() {
      draining = false;
      finish();
      if (ctx.response().ended()) {
        request.connection().close();
      } else {
        ctx.addEndHandler(v -> request.connection().close());
      }
    }

    /** Closes and deletes the spooled file once its opening has settled, so that none is created after. */
    Future<Void> discard() {
      if (discarded != null) {
        return discarded;
      }
      List<Future<Void>> deletions = new ArrayList<>();
      for (int i = 0; i < files.size(); i++) {
        String file = files.get(i).toString();
        deletions.add(opened.get(i).transform(open -> closeQuietly(open.succeeded() ? open.result() : null))
            .transform(closed -> vertx.fileSystem().delete(file))
            .otherwiseEmpty());
      }
      discarded = Future.join(deletions).mapEmpty();
      return discarded;
    }
  }

  /** A new, unguessable name for a spooled body in the uploads directory (what {@link #sweep} looks at). */
  static Path newPath(Path dir) {
    return dir.resolve(PREFIX + HexFormat.of().formatHex(randomBytes()));
  }

  /** Closes a spooled file that may be closed already (end() closes it; a closed handle throws). */
  static Future<Void> closeQuietly(AsyncFile file) {
    if (file == null) {
      return Future.succeededFuture();
    }
    try {
      return file.close().otherwiseEmpty();
    } catch (RuntimeException alreadyClosed) {
      return Future.succeededFuture();
    }
  }

  /** What a decoder failure means to the caller: a body that is not multipart as it says. */
  private static ApiError malformed(Throwable e) {
    if (e instanceof ApiError api) {
      return api;
    }
    String simple = e.getClass().getSimpleName();
    if (simple.startsWith("TooLong") || simple.startsWith("TooMany")) {
      return new ApiError(413, "too_large", "a multipart part's headers or fields are too large or too many");
    }
    return ApiError.badRequest("invalid_multipart", "the multipart body could not be read; " + SHAPE);
  }

  private static String printable(String s) {
    String clean = s.replaceAll("[^\\x20-\\x7e]", "?");
    return clean.length() > 100 ? clean.substring(0, 100) + "…" : clean;
  }

  private static byte[] randomBytes() {
    byte[] b = new byte[12];
    RANDOM.nextBytes(b);
    return b;
  }

  /**
   * Deletes spooled files older than {@code age} (left by a gateway that died mid-request: a live
   * upload is younger than the body timeout plus the ingest that reads it). Blocking; returns how
   * many went.
   */
  static int sweep(Path dir, Duration age) {
    Instant before = Instant.now().minus(age);
    int deleted = 0;
    if (!Files.isDirectory(dir)) {
      return 0;
    }
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      for (Path p : entries) {
        try {
          if (Files.isRegularFile(p) && Files.getLastModifiedTime(p).toInstant().isBefore(before)) {
            Files.deleteIfExists(p);
            deleted++;
          }
        } catch (IOException e) {
          log.warn("cannot sweep leftover upload {}: {}", p, e.toString());
        }
      }
    } catch (IOException e) {
      log.warn("cannot sweep the uploads directory {}: {}", dir, e.toString());
    }
    return deleted;
  }
}
