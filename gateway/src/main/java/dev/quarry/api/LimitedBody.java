package dev.quarry.api;

import io.vertx.core.Handler;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.nio.file.Path;

/**
 * A {@link BodyHandler} that also records its limit on the context, so that a 413 can tell the
 * caller which limit the body broke. Uploaded files are always deleted when the request ends,
 * whether it succeeded or failed.
 */
final class LimitedBody implements Handler<RoutingContext> {
  static final String LIMIT_KEY = "quarry.bodyLimit";

  private final long limit;
  private final BodyHandler delegate;

  private LimitedBody(long limit, BodyHandler delegate) {
    this.limit = limit;
    this.delegate = delegate;
  }

  static LimitedBody uploads(long limit, Path uploadsDir) {
    return new LimitedBody(limit, BodyHandler.create(uploadsDir.toString())
        .setBodyLimit(limit)
        .setDeleteUploadedFilesOnEnd(true)
        .setMergeFormAttributes(false));
  }

  static LimitedBody json(long limit) {
    return new LimitedBody(limit, BodyHandler.create(false).setBodyLimit(limit));
  }

  @Override
  public void handle(RoutingContext ctx) {
    ctx.put(LIMIT_KEY, limit);
    delegate.handle(ctx);
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
