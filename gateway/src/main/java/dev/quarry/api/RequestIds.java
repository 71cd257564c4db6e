package dev.quarry.api;

import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;
import java.util.UUID;
import java.util.regex.Pattern;

/** The id of each request, which its response and any log line about it carry. */
final class RequestIds {
  private RequestIds() {}

  static final String HEADER = "X-Request-Id";
  private static final Pattern CLIENT_HEADER = Pattern.compile("[A-Za-z0-9._:-]{1,128}");

  /**
   * Gives every response an {@code X-Request-Id}: the client's own when it sent one that is safe to
   * echo and log (up to 128 letters, digits and {@code ._:-}), else a new one. The gateway's log
   * names it with any unexpected failure, so a user's report can be matched to the log.
   */
  static void assign(RoutingContext ctx) {
    ensure(ctx);
    ctx.next();
  }

  /**
   * The request's id, given now if no handler gave it one yet: a request the router fails before
   * its first handler (vert.x-web's own checks) still gets one, in its answer and in the log.
   */
  static String ensure(RoutingContext ctx) {
    String id = ctx.get(HEADER);
    if (id == null) {
      id = of(ctx.request());
      ctx.put(HEADER, id);
      ctx.response().putHeader(HEADER, id);
    }
    return id;
  }

  /** The client's id when it sent one safe to echo and log, else a new one. */
  static String of(HttpServerRequest request) {
    String given = request.getHeader(HEADER);
    return given != null && CLIENT_HEADER.matcher(given).matches()
        ? given : "req_" + UUID.randomUUID().toString().replace("-", "");
  }

}
