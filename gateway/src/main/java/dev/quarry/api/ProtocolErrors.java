package dev.quarry.api;

import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.net.HostAndPort;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Requests that break HTTP itself, as opposed to the API: a head the decoder could not read (a bad
 * request line, method token, version, header name or value, folded header, an invalid or
 * conflicting Content-Length, a line or header block over the limits), a head it read that RFC 9112
 * says to refuse (no Host, two, or an invalid one; a transfer coding other than one final
 * {@code chunked}; a version other than 1.0 and 1.1), and a chunked body it could not read. Each is
 * a 4xx (or 501 or 505, which RFC 9110 names for these) in the API's error shape, with
 * {@code Connection: close}: once the framing is in doubt, nothing more on the connection can be
 * trusted to be the request the client meant.
 *
 * <p>A folded header line (obs-fold) is joined to the line before with a space, as Netty does and
 * as RFC 9112 (5.2) allows in place of a 400: a fold in a framing header cannot hide anything,
 * since the joined value is what is checked ({@code Transfer-Encoding: chunked} folded onto
 * {@code gzip} is 501, a folded Content-Length is no number, 400).
 *
 * <p>They are the client's doing (or an attacker's), so they are never an ERROR in the log and
 * never a 500. Before, a request without Host answered {@code 500 internal} on every route and
 * logged an ERROR, and a chunk-size line over the limit did too (issue 33).
 */
public final class ProtocolErrors {
  /** How much of the decoder's own words (which quote the offending bytes) a message repeats. */
  private static final int DETAIL_CHARS = 160;

  /**
   * Responses given here: a route still under way for the request (waiting for its key, say) fails
   * once it finds its answer given, and that is no one's error ({@link ErrorMapping}).
   */
  private static final java.util.Set<HttpServerResponse> answered =
      java.util.Collections.synchronizedSet(java.util.Collections.newSetFromMap(new java.util.WeakHashMap<>()));

  private ProtocolErrors() {}

  /**
   * Whether {@code response} is the refusal of a request that broke HTTP: a handler still at work on
   * the request (waiting for its key, its readiness checks) has nothing left to answer.
   */
  public static boolean answered(HttpServerResponse response) {
    return answered.contains(response);
  }

  /** Why the decoder could not read a request's head: the status and words for it. */
  public static ApiError ofHead(Throwable cause) {
    if (cause instanceof TooLongHttpLineException) {
      return new ApiError(414, "uri_too_long", "the request line is longer than the gateway reads ("
          + HttpServerOptions.DEFAULT_MAX_INITIAL_LINE_LENGTH + " bytes); send a shorter path and query");
    }
    if (cause instanceof TooLongHttpHeaderException) {
      return new ApiError(431, "headers_too_large", "the request's headers are larger than the gateway reads ("
          + HttpServerOptions.DEFAULT_MAX_HEADER_SIZE + " bytes in all)");
    }
    return ApiError.badRequest("malformed_request", "the request's head is not valid HTTP/1.1" + detail(cause));
  }

  /**
   * Why the decoder could not read a request's body (its chunked framing): the status and words
   * for it; null when {@code failure} is not the decoder's (the client hanging up, say).
   */
  public static ApiError ofBody(Throwable failure) {
    Throwable cause = failure instanceof DecoderException d && d.getCause() != null ? d.getCause() : failure;
    if (cause instanceof TooLongHttpHeaderException) {
      return new ApiError(431, "headers_too_large", "the chunked body's trailer fields are larger than the gateway"
          + " reads (" + HttpServerOptions.DEFAULT_MAX_HEADER_SIZE + " bytes in all)");
    }
    if (cause instanceof TooLongHttpLineException) {
      return ApiError.badRequest("malformed_chunked_body", "a chunk-size line of the chunked body is longer than"
          + " the gateway reads (" + HttpServerOptions.DEFAULT_MAX_INITIAL_LINE_LENGTH + " bytes)");
    }
    if (fromDecoder(failure)) {
      return ApiError.badRequest("malformed_chunked_body", "the chunked body is not valid chunked encoding"
          + detail(cause));
    }
    return null;
  }

  /**
   * Whether {@code failure} is the HTTP decoder's: its exceptions, or what it throws while parsing
   * a chunk size (a {@link NumberFormatException} or {@link IllegalArgumentException} raised in
   * Netty's codec), which it passes on as they are.
   */
  static boolean fromDecoder(Throwable failure) {
    if (failure instanceof DecoderException || failure instanceof TooLongFrameException) {
      return true;
    }
    if (failure instanceof IllegalArgumentException) {
      for (StackTraceElement frame : failure.getStackTrace()) {
        if (frame.getClassName().startsWith("io.netty.handler.codec.")) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * What RFC 9112 has a server refuse in a head the decoder read: no Host in HTTP/1.1, more than
   * one, or one that is not a valid authority (400); a version other than 1.0 and 1.1 (505); a
   * transfer coding other than {@code chunked} (501), {@code chunked} not once and last, or any
   * Transfer-Encoding in HTTP/1.0 (400). Null when the head is fine.
   */
  public static ApiError ofDecodedHead(HttpServerRequest request) {
    if (request.version() == null) {
      return new ApiError(505, "http_version_not_supported", "the gateway speaks HTTP/1.1 and HTTP/1.0 only");
    }
    List<String> hosts = request.headers().getAll(HttpHeaders.HOST);
    if (hosts.size() > 1) {
      return ApiError.badRequest("invalid_host", "the request has " + hosts.size() + " Host headers; send one");
    }
    if (hosts.isEmpty() && request.version() == HttpVersion.HTTP_1_1) {
      return ApiError.badRequest("invalid_host", "the request has no Host header, which HTTP/1.1 requires");
    }
    if (hosts.size() == 1 && !validHost(hosts.get(0))) {
      return ApiError.badRequest("invalid_host", "the Host header is not a valid host[:port]");
    }
    List<String> encodings = request.headers().getAll(HttpHeaders.TRANSFER_ENCODING);
    return encodings.isEmpty() ? null : transferCodings(encodings, request.version());
  }

  /**
   * A Host of RFC 3986's host (a name, an IPv4 address or a bracketed IP literal) and an optional
   * port, without percent-encoding: Vert.x's own parser throws on some percent-encoded names
   * ({@code %41}), so those are refused here before anything parses them.
   */
  static boolean validHost(String host) {
    if (host.isBlank() || !HOST.matcher(host).matches()) {
      return false;
    }
    try {
      return HostAndPort.parseAuthority(host, -1) != null;
    } catch (RuntimeException e) {
      return false;
    }
  }

  private static final java.util.regex.Pattern HOST =
      java.util.regex.Pattern.compile("(\\[[0-9A-Fa-f:.]{2,45}]|[A-Za-z0-9._~!$&'()*+,;=-]{1,255})(:[0-9]{0,5})?");

  private static ApiError transferCodings(List<String> headers, HttpVersion version) {
    if (version == HttpVersion.HTTP_1_0) {
      return ApiError.badRequest("malformed_request", "an HTTP/1.0 request cannot have a Transfer-Encoding");
    }
    List<String> codings = new ArrayList<>();
    for (String header : headers) {
      for (String coding : header.split(",", -1)) {
        String c = coding.strip().toLowerCase(Locale.ROOT);
        if (!c.isEmpty()) {
          codings.add(c);
        }
      }
    }
    for (String c : codings) {
      if (!c.equals("chunked")) {
        return new ApiError(501, "transfer_coding_not_implemented", "the transfer coding '" + printable(c)
            + "' is not implemented; send the body as it is, or chunked");
      }
    }
    if (codings.size() != 1) {
      return ApiError.badRequest("malformed_request", codings.isEmpty() ? "the Transfer-Encoding header is empty"
          : "the body is said to be chunked more than once");
    }
    return null;
  }

  private static final java.util.Set<String> CLOSING = java.util.Set.of("malformed_request", "malformed_chunked_body",
      "invalid_host", "uri_too_long", "headers_too_large", "transfer_coding_not_implemented",
      "http_version_not_supported");

  /** Whether {@code error} refuses a request for breaking HTTP, after which its connection is closed. */
  static boolean closesConnection(ApiError error) {
    return CLOSING.contains(error.code());
  }

  /**
   * Answers {@code error} in the API's error shape (OpenAI's on its paths) with
   * {@code Connection: close}, and closes the connection once the answer is out.
   */
  public static void reply(HttpServerRequest request, ApiError error) {
    HttpServerResponse response = request.response();
    if (response.headWritten() || response.ended() || response.closed()) {
      request.connection().close();
      return;
    }
    String path = request.path();
    boolean openAi = path != null && (path.startsWith("/v1/chat/") || path.equals("/v1/models")
        || path.startsWith("/v1/models/"));
    answered.add(response);
    response.setStatusCode(error.status())
        .putHeader(HttpHeaders.CONTENT_TYPE, ApiRoutes.JSON)
        .putHeader(HttpHeaders.CONNECTION, "close")
        .putHeader(RequestIds.HEADER, RequestIds.of(request));
    response.end((openAi ? WireFormat.openAiError(error) : WireFormat.error(error)).encode());
    request.connection().close();
  }

  /** ": " and the first line of the decoder's own message, shortened and printable; "" without one. */
  private static String detail(Throwable cause) {
    String m = cause == null ? null : cause.getMessage();
    if (m == null || m.isBlank()) {
      return "";
    }
    String line = m.lines().findFirst().orElse("");
    return ": " + printable(line.length() > DETAIL_CHARS ? line.substring(0, DETAIL_CHARS) + "…" : line);
  }

  private static String printable(String s) {
    return s.replaceAll("[^\\x20-\\x7e]", "?");
  }
}
