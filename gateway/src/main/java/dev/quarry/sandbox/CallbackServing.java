package dev.quarry.sandbox;

import dev.quarry.proto.sandbox.v1.CallbackError;
import dev.quarry.proto.sandbox.v1.CallbackKind;
import dev.quarry.proto.sandbox.v1.CallbackReply;
import dev.quarry.proto.sandbox.v1.CallbackRequest;
import dev.quarry.proto.sandbox.v1.GatewayMessage;
import dev.quarry.telemetry.QuarryMetrics;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How the callbacks of one sandbox take their turn and are answered: a callback of the running cell
 * takes one of its sandbox's places ({@code QUARRY_SANDBOX_CALLBACKS_IN_FLIGHT}), then one of its
 * tenant's ({@code QUARRY_TENANT_CALLBACKS_IN_FLIGHT}); then it is served and answered. Those waiting
 * wait in order; the code just awaits longer.
 */
final class CallbackServing {
  private static final Logger LOG = LoggerFactory.getLogger(CallbackServing.class);

  /** What the serving needs of its session. */
  interface Session {
    String id();

    /** The running cell when {@code cellId} names it, else null. */
    GrpcSandboxSession.Cell current(String cellId);

    boolean isClosed();

    /** Closed or dead: a stray call is only refused, not taken for a protocol error. */
    boolean ending();

    void protocolError(String detail);
  }

  private final Vertx vertx;
  private final Session session;
  private final LiveSandbox live;
  private final Callbacks callbacks;
  private final QuarryMetrics metrics;
  /** This sandbox's callbacks in flight, and its tenant's across all of its sandboxes. */
  private final InFlightLimit ownCallbacks;
  private final InFlightLimit tenantCallbacks;

  CallbackServing(Vertx vertx, Session session, LiveSandbox live, Callbacks callbacks, QuarryMetrics metrics,
      SandboxSettings.Fairness fairness, InFlightLimit tenantCallbacks) {
    this.vertx = vertx;
    this.session = session;
    this.live = live;
    this.callbacks = callbacks;
    this.metrics = metrics;
    this.tenantCallbacks = tenantCallbacks;
    this.ownCallbacks = new InFlightLimit(fairness.callbacksPerSandbox(), task -> vertx.runOnContext(v -> task.run()));
  }

  /** No new callback of this sandbox starts (its stream is full) until {@link #resume}. */
  void pause() {
    ownCallbacks.pause();
  }

  void resume() {
    ownCallbacks.resume();
  }

  /** The session closed: callbacks still waiting for a place are dropped. */
  void clear() {
    ownCallbacks.clear();
  }

  /**
   * A callback takes its turn (see the class). Past {@link GrpcSandboxSession#MAX_WAITING_CALLBACKS}
   * waiting for a place of the sandbox, the stream is not read until the queue shrinks, so a flood
   * costs the gateway no more than that.
   */
  void serve(CallbackRequest request) {
    GrpcSandboxSession.Cell c = session.current(request.getCellId());
    if (c == null) {
      outsideCell(request);
      return;
    }
    CallbackType type = CallbackType.of(request.getKind());
    if (type != null) { // an unknown kind is refused below, and heard as nothing
      c.notify(() -> c.listener.callback(type, CallbackArguments.of(request.getArgumentsJson())));
    }
    ownCallbacks.enter(() -> tenantCallbacks.enter(() -> {
      Places places = new Places(c);
      try {
        // A call whose cell ended (or whose session closed) while it waited is not served.
        if (session.isClosed() || !c.admit(places)) {
          places.giveBack();
          return;
        }
        answer(request, places);
      } catch (Throwable e) { // answer() catches its own; this is the last guard of the places
        LOG.warn("callback {} of sandbox {} could not start: {}", request.getKind(), session.id(), e.toString());
        places.giveBack();
      }
    }));
    if (ownCallbacks.waiting() >= GrpcSandboxSession.MAX_WAITING_CALLBACKS) {
      live.endpoint().pauseReading();
    }
  }

  /**
   * A callback that names no running cell, or another cell than the running one: the runner sends a
   * cell's calls only while that cell runs, so this is a stream the sandbox's code took over (a
   * thread left behind by an earlier cell, say). It is refused without being served, counted, cited
   * or recorded; the code hears why, and the sandbox is ended as for any protocol error (a call from
   * a sandbox already ending or closed is only refused).
   */
  private void outsideCell(CallbackRequest request) {
    String name = callbackName(request.getKind());
    metrics.callback(name, "refused", Duration.ZERO);
    String cellId = CallbackArguments.cut(request.getCellId(), 40);
    live.endpoint().send(GatewayMessage.newBuilder().setCallbackReply(CallbackReply.newBuilder()
        .setCallId(request.getCallId())
        .setError(CallbackError.newBuilder().setType("RuntimeError").setMessage(name
            + "() was called outside its cell (cell id '" + cellId + "' is not the running cell's); a call is"
            + " served only while the cell that makes it runs"))).build());
    if (!session.ending()) {
      session.protocolError("a " + name + " callback outside its cell (cell id '" + cellId + "')");
    }
  }

  /**
   * The places (one of the sandbox's, one of its tenant's) a callback being served holds. They are
   * given back once: when the call completes, or when its cell ends (or its session closes) with
   * the call still running, whichever is first. A call outliving its cell (an llm() still waiting
   * on the model) then holds none of its tenant's places (R6-8), and its late completion gives
   * nothing back twice.
   */
  final class Places {
    private final java.util.concurrent.atomic.AtomicBoolean given = new java.util.concurrent.atomic.AtomicBoolean();
    private final GrpcSandboxSession.Cell cell;

    Places(GrpcSandboxSession.Cell cell) {
      this.cell = cell;
    }

    /** Gives the places to the next callbacks, and resumes reading once few wait; true the first time only. */
    boolean giveBack() {
      if (!given.compareAndSet(false, true)) {
        return false;
      }
      cell.forget(this);
      tenantCallbacks.leave();
      ownCallbacks.leave();
      if (ownCallbacks.waiting() <= GrpcSandboxSession.MAX_WAITING_CALLBACKS / 2) {
        live.endpoint().resumeReading();
      }
      return true;
    }

    boolean givenBack() {
      return given.get();
    }
  }

  /**
   * Serves one callback and replies. Whatever happens inside (an Error such as OutOfMemoryError
   * included), its places are given back exactly once: a leak would stop the tenant's callbacks for
   * good once {@code callbacksPerTenant} had leaked.
   */
  private void answer(CallbackRequest request, Places places) {
    long started = System.nanoTime();
    Future<String> result;
    try {
      result = call(request.getKind(), request.getArgumentsJson());
    } catch (Throwable e) {
      result = Future.failedFuture(e);
    }
    try {
      result.onComplete(ar -> {
        if (places.givenBack()) {
          return; // its cell ended first: nobody waits for the reply, and its places are back already
        }
        try {
          reply(request, ar, started);
        } catch (Throwable e) {
          LOG.warn("callback {} of sandbox {}: no reply could be sent: {}", request.getKind(), session.id(),
              e.toString());
        } finally {
          places.giveBack();
        }
      });
    } catch (Throwable e) {
      LOG.warn("callback {} of sandbox {} failed: {}", request.getKind(), session.id(), e.toString());
      places.giveBack();
    }
  }

  private void reply(CallbackRequest request, AsyncResult<String> ar, long started) {
    metrics.callback(callbackName(request.getKind()), ar.succeeded() ? "ok"
        : ar.cause() instanceof CallbackFailure ? "refused" : "error",
        Duration.ofNanos(System.nanoTime() - started));
    CallbackReply.Builder reply = CallbackReply.newBuilder().setCallId(request.getCallId());
    if (ar.succeeded()) {
      reply.setResultJson(ar.result());
    } else if (ar.cause() instanceof CallbackFailure f) {
      reply.setError(CallbackError.newBuilder().setType(f.type())
          .setMessage(f.message() == null || f.message().isEmpty() ? f.type() : f.message()));
    } else {
      LOG.warn("callback {} of sandbox {} failed: {}", request.getKind(), session.id(), ar.cause().toString());
      reply.setError(CallbackError.newBuilder().setType("RuntimeError")
          .setMessage(callbackName(request.getKind()) + " failed inside the gateway"));
    }
    live.endpoint().send(GatewayMessage.newBuilder().setCallbackReply(reply).build());
  }

  private Future<String> call(CallbackKind kind, String argumentsJson) {
    // Checked before parsing: the runner refuses larger arguments itself, so only escaped code sends them.
    if (argumentsJson.length() > GrpcSandboxSession.MAX_CALLBACK_ARGUMENT_CHARS) {
      throw CallbackFailure.valueError(callbackName(kind) + "(): arguments of " + argumentsJson.length()
          + " characters are over the " + GrpcSandboxSession.MAX_CALLBACK_ARGUMENT_CHARS + " limit");
    }
    JsonObject args = new JsonObject(argumentsJson);
    return switch (kind) {
      case CALLBACK_KIND_SEARCH -> {
        Object query = args.getValue("query");
        Object limit = args.getValue("limit", 10);
        if (!(query instanceof String q)) {
          throw CallbackFailure.valueError("search(query, limit): query must be a string");
        }
        if (!(limit instanceof Integer || limit instanceof Long)) {
          throw CallbackFailure.valueError("search(query, limit): limit must be an integer");
        }
        // Decoding only: what a query and a limit must be is the callbacks' rule (QueryRules), worded there.
        long n = ((Number) limit).longValue();
        if (n < Integer.MIN_VALUE || n > Integer.MAX_VALUE) {
          throw CallbackFailure.valueError("search(): limit " + n + " is out of range");
        }
        yield callbacks.search(q, (int) n).map(JsonArray::encode);
      }
      case CALLBACK_KIND_LIST_DOCUMENTS -> callbacks.listDocuments().map(JsonArray::encode);
      case CALLBACK_KIND_LLM -> {
        if (!(args.getValue("prompt") instanceof String prompt)) {
          throw CallbackFailure.valueError("llm(prompt): prompt must be a string");
        }
        yield callbacks.llm(prompt).map(Json::encode);
      }
      default -> throw CallbackFailure.runtimeError("unknown callback " + kind);
    };
  }

  /** The callback's label in metrics and errors: its contract name, or "callback" for an unknown kind. */
  static String callbackName(CallbackKind kind) {
    CallbackType type = CallbackType.of(kind);
    return type == null ? "callback" : type.wireName();
  }
}
