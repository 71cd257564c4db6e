package dev.quarry.api;

import dev.quarry.agent.CallbackBudget;
import dev.quarry.callbacks.TenantCallbacks;
import dev.quarry.sandbox.CellError;
import dev.quarry.sandbox.CellListener;
import dev.quarry.sandbox.CellOptions;
import dev.quarry.sandbox.CellOutcome;
import dev.quarry.sandbox.SandboxCapacityExhausted;
import dev.quarry.sandbox.SandboxQuotaExceeded;
import dev.quarry.sandbox.SandboxService;
import dev.quarry.sandbox.SandboxSettings;
import dev.quarry.sandbox.SandboxSession;
import dev.quarry.sandbox.Scope;
import dev.quarry.store.DocumentStore;
import io.vertx.core.Future;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;
import java.util.function.Supplier;

/**
 * POST /v1/executions: a program run as one cell in a fresh sandbox of the caller's tenant,
 * answered with the tool result of docs/CONTRACT.md, or streamed as server-sent events ({@code output}
 * events as the program prints, then exactly one {@code result}). The sandbox is removed before
 * the answer ends, and at once when the client goes away.
 */
final class Executions {
  private final SandboxService sandboxes;
  private final DocumentStore documents;
  private final BiFunction<Scope, Supplier<Instant>, TenantCallbacks> callbacks;

  /**
   * @param sandboxes null when this gateway cannot run sandboxes (every request then gets 503)
   * @param callbacks the tenant's callbacks for a scope, each llm() ending by the deadline given
   */
  private final java.time.Duration heartbeat;

  Executions(SandboxService sandboxes, DocumentStore documents,
      BiFunction<Scope, Supplier<Instant>, TenantCallbacks> callbacks,
      java.time.Duration heartbeat) {
    this.heartbeat = heartbeat;
    this.sandboxes = sandboxes;
    this.documents = documents;
    this.callbacks = callbacks;
  }

  /** What the request asks for, validated. */
  record Request(String code, Scope scope, CellOptions options, int callbacks, boolean stream) {}

  Request parse(RoutingContext ctx) {
    JsonObject body = Requests.jsonObject(ctx.body().buffer());
    if (sandboxes == null) {
      throw new ApiError(503, "sandbox_unavailable", "this gateway cannot run code: its sandboxes did not start");
    }
    Object code = body.getValue("code");
    if (!(code instanceof String c)) {
      throw ApiError.badRequest("invalid_code", code == null ? "field 'code' is required"
          : "field 'code' must be a string");
    }
    if (c.isBlank()) {
      throw ApiError.badRequest("invalid_code", "field 'code' is empty");
    }
    Object rawIds = body.getValue("document_ids");
    Set<UUID> ids = Requests.documentIds(rawIds);
    Scope scope = rawIds == null ? Scope.ALL : new Scope(ids);
    if (rawIds != null && ids.isEmpty()) {
      throw ApiError.badRequest("invalid_document_ids",
          "field 'document_ids' is empty; leave it out to use all documents");
    }
    CellOptions options = CellOptions.defaults(sandboxes.settings());
    SandboxSettings.Fairness fairness = sandboxes.settings().fairness();
    long callbacks = fairness.executionCallbacks();
    Object limits = body.getValue("limits");
    if (limits != null) {
      if (!(limits instanceof JsonObject l)) {
        throw ApiError.badRequest("invalid_limits", "field 'limits' must be an object");
      }
      options = new CellOptions(
          limit(l, "wall_time_ms", options.wallTimeMs()),
          limit(l, "max_output_chars", options.maxOutputChars()),
          List.of());
      try {
        options.requireWithin(sandboxes.settings());
      } catch (IllegalArgumentException e) {
        throw ApiError.badRequest("invalid_limits", "field 'limits." + e.getMessage().replaceFirst(" ", "' "));
      }
      callbacks = limit(l, "callbacks", callbacks);
      if (callbacks < 1 || callbacks > fairness.maxExecutionCallbacks()) {
        throw ApiError.badRequest("invalid_limits", "field 'limits.callbacks' must be between 1 and "
            + fairness.maxExecutionCallbacks() + " (QUARRY_MAX_EXECUTION_CALLBACKS), got " + callbacks);
      }
    }
    Object stream = body.getValue("stream");
    if (stream != null && !(stream instanceof Boolean)) {
      throw ApiError.badRequest("invalid_stream", "field 'stream' must be true or false");
    }
    boolean sse = Boolean.TRUE.equals(stream) || EventStream.accepted(ctx);
    return new Request(c, scope, options, (int) callbacks, sse);
  }

  private static long limit(JsonObject limits, String name, long dflt) {
    Object v = limits.getValue(name);
    if (v == null) {
      return dflt;
    }
    if (!(v instanceof Integer || v instanceof Long)) {
      throw ApiError.badRequest("invalid_limits", "field 'limits." + name + "' must be an integer, got " + v);
    }
    return ((Number) v).longValue();
  }

  void handle(RoutingContext ctx, UUID tenantId) {
    Request request = parse(ctx);
    HttpServerResponse response = ctx.response();
    // The cell's end, set when it starts: its callbacks (an llm() waiting on the model) end by then
    // rather than outlive the execution (R6-8). No callback is served before the cell starts.
    AtomicReference<Instant> deadline = new AtomicReference<>(Instant.MAX);
    knownScope(tenantId, request.scope())
        .compose(known -> sandboxes.open(tenantId, request.scope(),
                new CallbackBudget(callbacks.apply(request.scope(), deadline::get), request.callbacks()))
            .recover(e -> Future.failedFuture(e instanceof SandboxCapacityExhausted || e instanceof SandboxQuotaExceeded ? e
                : new ApiError(503, "sandbox_unavailable", "no sandbox could be started: " + e.getMessage()))))
        .onFailure(ctx::fail)
        .onSuccess(session -> run(ctx, response, session, request, deadline));
  }

  /**
   * Refuses a scope naming documents the tenant does not have with the same 404 whether they are
   * missing or another tenant's, before any sandbox starts: an empty /documents would let the
   * program run on nothing without saying why.
   */
  private Future<Void> knownScope(UUID tenantId, Scope scope) {
    if (scope.isAll()) {
      return Future.succeededFuture();
    }
    return documents.existing(tenantId, scope.documentIds()).compose(found -> {
      List<String> unknown = scope.documentIds().stream().filter(id -> !found.contains(id))
          .map(UUID::toString).sorted().toList();
      return unknown.isEmpty() ? Future.succeededFuture()
          : Future.failedFuture(new ApiError(404, "unknown_documents",
              "no documents with ids " + unknown + " for this tenant"));
    });
  }

  private void run(RoutingContext ctx, HttpServerResponse response, SandboxSession session, Request request,
      AtomicReference<Instant> deadline) {
    if (response.closed()) {
      session.close();
      return;
    }
    // The client going away ends the sandbox at once; close is idempotent with the normal path's.
    response.closeHandler(v -> {
      session.cancel();
      session.close();
    });
    CellListener listener = CellListener.NONE;
    if (request.stream()) {
      EventStream.open(response, ctx.vertx(), heartbeat).writeHead();
      listener = new CellListener() {
        @Override
        public void output(CellListener.Stream channel, String text) {
          if (!response.closed() && !response.ended()) {
            response.write(event("output", new JsonObject()
                .put("stream", channel.wireName())
                .put("text", text)));
          }
        }
      };
    }
    deadline.set(Instant.now().plusMillis(request.options().wallTimeMs()));
    session.execute(request.code(), request.options(), listener)
        .transform(ar -> session.close().transform(closed -> ar.succeeded()
            ? Future.succeededFuture(ar.result())
            : Future.<CellOutcome>failedFuture(ar.cause())))
        .onComplete(ar -> {
          if (response.closed() || response.ended()) {
            return;
          }
          if (ar.failed()) {
            if (request.stream()) {
              response.end(event("result", new CellOutcome(CellOutcome.Status.KILLED, "", "",
                  new CellError(CellError.SANDBOX_UNAVAILABLE, "the execution failed in the gateway", ""), false, 0)
                  .toToolResult()));
            } else {
              ctx.fail(ar.cause());
            }
            return;
          }
          JsonObject result = ar.result().toToolResult();
          if (request.stream()) {
            response.end(event("result", result));
          } else {
            ApiRoutes.replyWhole(ctx, response.setStatusCode(200).putHeader(HttpHeaders.CONTENT_TYPE,
                "application/json"), result.encode());
          }
        });
  }

  /** One server-sent event; JSON data never contains a raw newline, so one data line suffices. */
  static String event(String name, JsonObject data) {
    return "event: " + name + "\ndata: " + data.encode() + "\n\n";
  }
}
