package dev.quarry.api;

import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;

/** What the API's streaming answers (analyses, executions, ingests) share: server-sent events. */
final class EventStream {
  static final String CONTENT_TYPE = "text/event-stream; charset=utf-8";

  private EventStream() {}

  /** Whether the request's {@code Accept} header asks for server-sent events. */
  static boolean accepted(RoutingContext ctx) {
    String accept = ctx.request().getHeader(HttpHeaders.ACCEPT);
    return accept != null && accept.contains("text/event-stream");
  }

  /** Makes {@code response} an event stream (status 200, chunked, not cached); nothing is written yet. */
  static HttpServerResponse open(HttpServerResponse response) {
    return response.setStatusCode(200).setChunked(true)
        .putHeader(HttpHeaders.CONTENT_TYPE, CONTENT_TYPE)
        .putHeader(HttpHeaders.CACHE_CONTROL, "no-cache");
  }
}
