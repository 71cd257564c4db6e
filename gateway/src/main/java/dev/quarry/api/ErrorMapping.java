package dev.quarry.api;

import dev.quarry.agent.AnalysisService;
import dev.quarry.ingest.IngestException;
import dev.quarry.sandbox.SandboxCapacityExhausted;
import dev.quarry.sandbox.SandboxQuotaExceeded;
import dev.quarry.store.DatabaseUnavailable;
import dev.quarry.tenancy.QuotaExceeded;
import io.vertx.core.Future;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.HttpException;
import java.util.concurrent.CompletionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every failure of every route becomes a response here, and only here: {@code {"error": {"code",
 * "message"}}} (OpenAI's shape on its routes), the status each part's refusal means, and the
 * headers that go with it ({@code Retry-After}, {@code WWW-Authenticate}). What is not the client's
 * doing is a 500 that names the request id, with the details in the log.
 */
final class ErrorMapping {
  private static final Logger log = LoggerFactory.getLogger(ErrorMapping.class);
  private static final String FORM_DECODER_PACKAGE = "io.netty.handler.codec.http.multipart.";

  private ErrorMapping() {}

  /** The one place where failures become responses: every route's failure handler. */
  static void render(RoutingContext ctx) {
    RequestIds.ensure(ctx);
    if (ProtocolErrors.answered(ctx.response())) {
      log.debug("request {} was refused for breaking HTTP; its route then failed: {}", ctx.<String>get(RequestIds.HEADER),
          String.valueOf(ctx.failure()));
      return;
    }
    ApiError error = toApiError(ctx);
    if (ctx.response().headWritten()) {
      // Too late for an error body: cut the response so the client cannot mistake it for a whole one.
      ctx.request().connection().close();
      return;
    }
    if (unwrap(ctx.failure()) instanceof QuotaExceeded over) {
      ctx.response().putHeader(HttpHeaders.RETRY_AFTER, Long.toString(over.retryAfterSeconds()));
    } else if (unwrap(ctx.failure()) instanceof SandboxQuotaExceeded over) {
      ctx.response().putHeader(HttpHeaders.RETRY_AFTER, Long.toString(over.retryAfterSeconds()));
    } else if (unwrap(ctx.failure()) instanceof SandboxCapacityExhausted full) {
      ctx.response().putHeader(HttpHeaders.RETRY_AFTER, Long.toString(full.retryAfterSeconds()));
    } else if (error.code().equals("database_unavailable")) {
      ctx.response().putHeader(HttpHeaders.RETRY_AFTER, "5");
    } else if (error.status() == 401) {
      ctx.response().putHeader("WWW-Authenticate", "Bearer");
    }
    if (ProtocolErrors.closesConnection(error)) {
      // The framing of the request is in doubt: nothing more on this connection is served.
      ctx.response().putHeader(HttpHeaders.CONNECTION, "close");
      ctx.addEndHandler(v -> ctx.request().connection().close());
    }
    JsonObject body = OpenAiRoutes.speaksOpenAi(ctx)
        ? WireFormat.openAiError(error) : McpTransport.speaksJsonRpc(ctx) ? McpTransport.error(error)
        : WireFormat.error(error);
    discardUploads(ctx).onComplete(done -> ApiRoutes.replyJson(ctx, error.status(), body));
  }

  /**
   * Deletes the request's spooled upload before the reply goes out, so that no client ever sees a
   * reply while its upload still sits on disk ({@link UploadBody} deletes it on every other path).
   */
  static Future<Void> discardUploads(RoutingContext ctx) {
    return Future.join(UploadBody.discard(ctx), SpooledBody.discard(ctx)).mapEmpty();
  }

  private static ApiError toApiError(RoutingContext ctx) {
    return toApiError(ctx, unwrap(ctx.failure()));
  }

  /** What a failure means to the client; an unexpected one is logged with the request's id. */
  static ApiError toApiError(RoutingContext ctx, Throwable failure) {
    int status = ctx.statusCode();
    return switch (failure) {
      case ApiError e -> e;
      // The HTTP decoder could not read the request's chunked body (the connection's guard has
      // answered it, since Vert.x closes the connection at once): the client's doing, never a 500.
      case Throwable e when ProtocolErrors.ofBody(e) != null -> ProtocolErrors.ofBody(e);
      case IngestException e -> ingestError(e);
      case AnalysisService.AnalysisRefused e -> refused(e);
      case QuotaExceeded e -> new ApiError(429, "quota_exceeded", e.getMessage());
      case SandboxQuotaExceeded e -> new ApiError(429, "quota_exceeded", e.getMessage());
      case SandboxCapacityExhausted e -> new ApiError(503, "sandbox_capacity_exhausted", e.getMessage());
      case Throwable e when DatabaseUnavailable.matches(e) -> new ApiError(503, "database_unavailable",
          "the database is unreachable for the moment (restarting or failing over); retry shortly");
      case IllegalArgumentException e -> ApiError.badRequest("invalid_request", e.getMessage());
      // A write for a tenant deleted while the request ran (its key checked out before the deletion).
      case io.vertx.pgclient.PgException e when "23503".equals(e.getSqlState()) && e.getMessage() != null
          && e.getMessage().contains("_tenant_id_fkey") -> new ApiError(401, "unauthorized",
          "the tenant of this API key was deleted while the request ran; nothing of it was stored");
      case HttpException e -> fromStatus(ctx, e.getStatusCode(), e.getPayload());
      // The client hung up before its request was read (a body cut short): nobody to answer, and
      // nothing the gateway did wrong, so no error in the log (red team R6-7).
      case io.vertx.core.http.HttpClosedException e -> {
        log.debug("client closed the connection during {} {} (request {})", ctx.request().method(),
            ctx.request().path(), ctx.<String>get(RequestIds.HEADER));
        yield new ApiError(400, "connection_closed", "the connection closed before the request was read");
      }
      case null -> fromStatus(ctx, status, null);
      case Exception e when e.getClass().getName().startsWith(FORM_DECODER_PACKAGE) ->
          // Netty's form decoder, reading a form body the client sent where none was expected or
          // one it built wrong: the client's doing, so a 4xx that says so.
          e.getClass().getSimpleName().startsWith("TooLong") || e.getClass().getSimpleName().startsWith("TooMany")
              ? new ApiError(413, "too_large", "the form body has a field too large or too many fields")
              : ApiError.badRequest("bad_request", "the form body could not be read");
      // A refusal with a 4xx that vert.x-web made itself (its check of Host, of the path): the
      // status says whose doing it is; its exception's words are vert.x-web's, not the API's.
      case Throwable e when status >= 400 && status < 500 -> fromStatus(ctx, status, null);
      default -> {
        log.error("unexpected failure on {} {} (request {})", ctx.request().method(), ctx.request().path(),
            ctx.<String>get(RequestIds.HEADER), failure);
        yield new ApiError(500, "internal", "internal error; the gateway log has the details, under request "
            + ctx.<String>get(RequestIds.HEADER));
      }
    };
  }

  /** A request for an analysis or a replay, refused before its work began. */
  static ApiError refused(AnalysisService.AnalysisRefused e) {
    int status = switch (e.reason()) {
      case MODEL_NOT_CONFIGURED, SANDBOX_UNAVAILABLE -> 503;
      case UNKNOWN_DOCUMENTS -> 404;
      case PRELOAD_OUTSIDE_SCOPE -> 400;
      case NO_PROGRAM, NOT_ANSWERED, FOLLOW_UPS_EXHAUSTED -> 409;
    };
    return new ApiError(status, e.code(), e.getMessage());
  }

  private static ApiError ingestError(IngestException e) {
    int status = switch (e.reason()) {
      case UNSUPPORTED_TYPE -> 415;
      case TOO_LARGE -> 413;
      case FIELD_TOO_LONG -> 400;
      case SHUTTING_DOWN, CONVERTER_UNAVAILABLE -> 503;
      case EMPTY, MALFORMED, CORRUPT, ENCRYPTED, INVALID_ENCODING, ARCHIVE_BOMB, NO_TEXT_EXTRACTED -> 422;
    };
    return new ApiError(status, e.reason().name().toLowerCase(java.util.Locale.ROOT), e.getMessage());
  }

  private static ApiError fromStatus(RoutingContext ctx, int status, String payload) {
    String where = ctx.request().method() + " " + ctx.request().path();
    // The router refuses a path that does not start with '/' (404) before the canonical check runs.
    String notCanonical = status == 404 || status == 405 ? Authentication.whyNotCanonical(ctx.request().path()) : null;
    if (notCanonical != null) {
      return Authentication.nonCanonical(notCanonical);
    }
    return switch (status) {
      case 404 -> ApiError.notFound("no such route: " + where);
      case 405 -> new ApiError(405, "method_not_allowed", "method not allowed: " + where);
      case 413 -> new ApiError(413, "too_large", "the request body is larger than the limit of "
          + LimitedBody.describe(ctx.<Long>get(LimitedBody.LIMIT_KEY, 0L)) + " for " + where);
      case 400 -> ApiError.badRequest("bad_request",
          "the request could not be read" + (payload == null ? "" : ": " + payload));
      default -> {
        if (status >= 400 && status < 500) {
          yield new ApiError(status, "http_" + status, payload == null ? "request rejected: " + where : payload);
        }
        log.error("unexpected status {} on {} without a cause (request {})", status, where, ctx.<String>get(RequestIds.HEADER));
        yield new ApiError(500, "internal", "internal error; the gateway log has the details, under request "
            + ctx.<String>get(RequestIds.HEADER));
      }
    };
  }

  static Throwable unwrap(Throwable t) {
    while (t instanceof CompletionException && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }
}
