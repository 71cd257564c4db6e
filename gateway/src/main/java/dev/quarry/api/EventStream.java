package dev.quarry.api;

import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;

/** What the API's streaming answers (analyses, executions, ingests) share: server-sent events. */
final class EventStream {
  static final String CONTENT_TYPE = "text/event-stream; charset=utf-8";

  private EventStream() {}

  /**
   * Whether the request's {@code Accept} headers ask for server-sent events: a media range
   * {@code text/event-stream} (exactly; wildcards do not ask for a stream) with a q-value above 0
   * (RFC 9110: {@code q=0} means not acceptable). A malformed q-value counts as 0.
   */
  static boolean accepted(RoutingContext ctx) {
    for (String accept : ctx.request().headers().getAll(HttpHeaders.ACCEPT)) {
      for (String range : accept.split(",")) {
        String[] parts = range.split(";");
        if (!parts[0].strip().equalsIgnoreCase("text/event-stream")) {
          continue;
        }
        if (quality(parts) > 0) {
          return true;
        }
      }
    }
    return false;
  }

  /** The q parameter of a media range (1 when absent, 0 when malformed or out of [0, 1]). */
  static double quality(String[] rangeAndParameters) {
    for (int i = 1; i < rangeAndParameters.length; i++) {
      String[] kv = rangeAndParameters[i].split("=", 2);
      if (kv.length == 2 && kv[0].strip().equalsIgnoreCase("q")) {
        String v = kv[1].strip();
        // RFC 9110 qvalue: 0[.ddd] or 1[.000]
        if (!v.matches("0(\\.[0-9]{0,3})?|1(\\.0{0,3})?")) {
          return 0;
        }
        return Double.parseDouble(v);
      }
    }
    return 1;
  }

  /** Makes {@code response} an event stream (status 200, chunked, not cached); nothing is written yet. */
  static HttpServerResponse open(HttpServerResponse response) {
    return response.setStatusCode(200).setChunked(true)
        .putHeader(HttpHeaders.CONTENT_TYPE, CONTENT_TYPE)
        .putHeader(HttpHeaders.CACHE_CONTROL, "no-cache");
  }
}
