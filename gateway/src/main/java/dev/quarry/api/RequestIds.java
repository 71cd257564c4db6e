package dev.quarry.api;

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
    String given = ctx.request().getHeader(HEADER);
    String id = given != null && CLIENT_HEADER.matcher(given).matches()
        ? given : "req_" + UUID.randomUUID().toString().replace("-", "");
    ctx.put(HEADER, id);
    ctx.response().putHeader(HEADER, id);
    ctx.next();
  }

}
