package dev.quarry.api;

import io.vertx.core.Handler;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;

/**
 * A {@link BodyHandler} that also records its limit on the context, so that a 413 can tell the
 * caller which limit the body broke, and that cuts off a body that has not all arrived within the
 * body timeout ({@code QUARRY_BODY_TIMEOUT_MS}): 408, and the connection closed, since the rest of
 * the body is never read. Multipart uploads have their own handler, {@link UploadBody}.
 */
final class LimitedBody implements Handler<RoutingContext> {
  static final String LIMIT_KEY = "quarry.bodyLimit";

  private final long limit;
  private final long timeoutMs;
  private final BodyHandler delegate;

  private LimitedBody(long limit, long timeoutMs, BodyHandler delegate) {
    this.limit = limit;
    this.timeoutMs = timeoutMs;
    this.delegate = delegate;
  }

  /** A body read into memory (JSON); a form body is decoded as attributes, never spooled to disk. */
  static LimitedBody json(long limit, long timeoutMs) {
    return new LimitedBody(limit, timeoutMs, BodyHandler.create(false).setBodyLimit(limit));
  }

  @Override
  public void handle(RoutingContext ctx) {
    ctx.put(LIMIT_KEY, limit);
    HttpServerRequest request = ctx.request();
    if (!request.isEnded()) {
      long timer = ctx.vertx().setTimer(timeoutMs, id -> {
        if (!request.isEnded() && !ctx.response().headWritten()) {
          ctx.response().putHeader(HttpHeaders.CONNECTION, "close");
          ctx.addEndHandler(v -> request.connection().close());
          ctx.fail(timedOut(timeoutMs));
        }
      });
      ctx.addEndHandler(v -> ctx.vertx().cancelTimer(timer));
    }
    delegate.handle(ctx);
  }

  static ApiError timedOut(long timeoutMs) {
    return new ApiError(408, "request_timeout", "the request body did not all arrive within " + timeoutMs
        + " ms (QUARRY_BODY_TIMEOUT_MS); the request is cut off");
  }

  /** "50 MiB (52428800 bytes)": readable, and exact for whoever set it. */
  static String describe(long bytes) {
    if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) == 0) {
      return bytes / (1024 * 1024) + " MiB (" + bytes + " bytes)";
    }
    if (bytes >= 1024 && bytes % 1024 == 0) {
      return bytes / 1024 + " KiB (" + bytes + " bytes)";
    }
    return bytes + " bytes";
  }
}
