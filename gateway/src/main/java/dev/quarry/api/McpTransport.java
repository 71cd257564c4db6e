package dev.quarry.api;

import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpStreamableServerSession;
import io.modelcontextprotocol.spec.McpStreamableServerTransport;
import io.modelcontextprotocol.spec.McpStreamableServerTransportProvider;
import io.modelcontextprotocol.spec.ProtocolVersions;
import io.vertx.core.Context;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The Model Context Protocol's Streamable HTTP transport at {@code /mcp}, on the gateway's own
 * router, for the MCP Java SDK's server (whose ready-made transports are servlets).
 *
 * <p>Every request is authenticated like the rest of the API, before it gets here, and a session
 * belongs to the tenant whose key opened it: another tenant's key naming the session is told it
 * does not exist, exactly as a session id nobody made. Each request's tenant and key travel to the
 * tool handlers in the transport context ({@link #TENANT}, {@link #API_KEY}), never from a field a
 * client fills in.
 *
 * <p>Sessions are recorded in PostgreSQL ({@link McpSessions}), so any replica serves any session:
 * a replica that gets a request for a session it has not seen builds its own copy of the SDK's
 * session from the recorded initialize parameters (the SDK keeps nothing else of a session between
 * requests that Quarry uses: it never asks the client anything). Each request looks its session up
 * (one round trip), so a session ended through one replica is gone from all at once. A tenant holds
 * at most {@value #MAX_SESSIONS_PER_TENANT} across the replicas; a session is gone after {@value
 * #IDLE_MINUTES} idle minutes. What a replica holds in memory is a cache of those copies.
 */
final class McpTransport implements McpStreamableServerTransportProvider {
  private static final Logger log = LoggerFactory.getLogger(McpTransport.class);
  static final String PATH = "/mcp";
  static final String TENANT = "quarry.tenant";
  static final String API_KEY = "quarry.api_key";
  /**
   * A {@code Future<Void>} that completes when the client goes away from the request's stream (its
   * connection closed before the answer ended), for tools whose work should stop with it.
   */
  static final String GONE = "quarry.gone";
  static final int MAX_SESSIONS_PER_TENANT = 64;
  static final long IDLE_MINUTES = 30;
  private static final String SESSION_HEADER = "Mcp-Session-Id";
  /** The most an initialize request's recorded parameters may take (capabilities, client info), encoded. */
  static final int MAX_INIT_CHARS = 16 * 1024;

  /** This replica's copy of a session: the SDK's session, under the id the client knows. */
  private record Held(McpStreamableServerSession session, String id, UUID tenant, long[] lastUsed) {}

  private final McpJsonMapper json = McpJsonDefaults.getMapper();
  private final JsonRpcMessages messages = new JsonRpcMessages(json);
  private final Map<String, Held> sessions = new ConcurrentHashMap<>();
  private final Vertx vertx;
  private final McpSessions store;
  private final long sweeper;
  private volatile McpStreamableServerSession.Factory sessions0;
  private volatile boolean closing;

  private final java.time.Duration heartbeat;

  McpTransport(Vertx vertx, java.time.Duration heartbeat, io.vertx.sqlclient.Pool pool) {
    this.heartbeat = heartbeat;
    this.vertx = vertx;
    this.store = new McpSessions(pool, java.time.Duration.ofMinutes(IDLE_MINUTES));
    this.sweeper = vertx.setPeriodic(60_000, t -> sweep());
  }

  void mount(Router router, Handler<RoutingContext> tenant, Handler<RoutingContext> takeBody,
      Handler<RoutingContext> body, Handler<RoutingContext> bodyRead) {
    router.post(PATH).handler(tenant).handler(takeBody).handler(body).handler(bodyRead).handler(this::post);
    router.get(PATH).handler(tenant).handler(this::get);
    router.delete(PATH).handler(tenant).handler(this::delete);
  }

  @Override
  public List<String> protocolVersions() {
    return List.of(ProtocolVersions.MCP_2025_03_26, ProtocolVersions.MCP_2025_06_18, ProtocolVersions.MCP_2025_11_25);
  }

  @Override
  public void setSessionFactory(McpStreamableServerSession.Factory factory) {
    this.sessions0 = factory;
  }

  @Override
  public Mono<Void> notifyClients(String method, Object params) {
    return Flux.fromIterable(sessions.values())
        .flatMap(h -> h.session().sendNotification(method, params).onErrorResume(e -> Mono.empty()))
        .then();
  }

  @Override
  public Mono<Void> closeGracefully() {
    closing = true;
    vertx.cancelTimer(sweeper);
    return Flux.fromIterable(List.copyOf(sessions.values()))
        .flatMap(h -> h.session().closeGracefully().onErrorResume(e -> Mono.empty()))
        .then(Mono.fromRunnable(sessions::clear));
  }

  private void sweep() {
    long cutoff = System.currentTimeMillis() - IDLE_MINUTES * 60_000;
    sessions.entrySet().removeIf(e -> {
      if (e.getValue().lastUsed()[0] < cutoff) {
        e.getValue().session().close();
        return true;
      }
      return false;
    });
  }

  private static McpTransportContext context(RoutingContext ctx) {
    return context(ctx, io.vertx.core.Promise.<Void>promise().future());
  }

  private static McpTransportContext context(RoutingContext ctx, io.vertx.core.Future<Void> gone) {
    String auth = ctx.request().getHeader(HttpHeaders.AUTHORIZATION);
    return McpTransportContext.create(Map.of(TENANT, ApiRoutes.tenant(ctx),
        API_KEY, auth == null ? "" : auth.substring(auth.indexOf(' ') + 1).trim(), GONE, gone));
  }

  private void post(RoutingContext ctx) {
    if (closing) {
      reply(ctx, 503, McpSchema.ErrorCodes.INTERNAL_ERROR, "the gateway is shutting down");
      return;
    }
    String accept = String.valueOf(ctx.request().getHeader(HttpHeaders.ACCEPT));
    if (!accept.contains("application/json") || !accept.contains("text/event-stream")) {
      reply(ctx, 406, McpSchema.ErrorCodes.INVALID_REQUEST,
          "an MCP POST must accept both application/json and text/event-stream");
      return;
    }
    McpSchema.JSONRPCMessage message;
    switch (messages.read(ctx.body().asString())) {
      case JsonRpcMessages.Invalid invalid -> {
        reply(ctx, invalid.status(), invalid.body());
        return;
      }
      case JsonRpcMessages.Valid valid -> message = valid.message();
    }
    McpTransportContext context = context(ctx);
    UUID tenant = ApiRoutes.tenant(ctx);
    if (message instanceof McpSchema.JSONRPCRequest request && McpSchema.METHOD_INITIALIZE.equals(request.method())) {
      initialize(ctx, request, tenant);
      return;
    }
    McpSchema.JSONRPCMessage read = message;
    session(ctx, tenant, held -> serve(ctx, held, read, context));
  }

  private void serve(RoutingContext ctx, Held held, McpSchema.JSONRPCMessage message, McpTransportContext context) {
    switch (message) {
      // Quarry never asks a client anything, so a response answers no request of the server's.
      case McpSchema.JSONRPCResponse response -> held.session().accept(response)
          .contextWrite(c -> c.put(McpTransportContext.KEY, context))
          .subscribe(null, e -> refused(ctx, response.id(), McpSchema.ErrorCodes.INVALID_REQUEST, e,
              "the response answers no request of the server's"), () -> accepted(ctx));
      // Its envelope and params are checked (JsonRpcMessages): what a handler still refuses is its params.
      case McpSchema.JSONRPCNotification notification -> held.session().accept(notification)
          .contextWrite(c -> c.put(McpTransportContext.KEY, context))
          .subscribe(null, e -> refused(ctx, null, McpSchema.ErrorCodes.INVALID_PARAMS, e,
              "the notification's params are not what " + notification.method() + " takes"), () -> accepted(ctx));
      case McpSchema.JSONRPCRequest request -> {
        HttpServerResponse response = EventStream.open(ctx.response(), vertx, heartbeat).putHeader(SESSION_HEADER, held.id());
        io.vertx.core.Promise<Void> gone = io.vertx.core.Promise.promise();
        StreamTransport stream = new StreamTransport(response, vertx.getOrCreateContext(), gone::tryComplete,
            ctx.get(RequestIds.HEADER));
        McpTransportContext withGone = context(ctx, gone.future());
        held.session().responseStream(request, stream)
            .contextWrite(c -> c.put(McpTransportContext.KEY, withGone))
            .subscribe(null, e -> {
              // The SDK fails the stream without an answer when a handler throws before its Mono
              // (a params shape it could not map): the request still gets one, never an empty stream.
              log.warn("mcp session {}: request {} failed: {}", held.id(), request.method(), e.toString());
              stream.answerFailure(request.id());
            });
      }
      default -> reply(ctx, 400, McpSchema.ErrorCodes.INVALID_REQUEST, "not a JSON-RPC message MCP knows");
    }
  }

  /**
   * Opens a session: recorded for every replica (unless the tenant holds {@value
   * #MAX_SESSIONS_PER_TENANT} on all of them together), then answered with its id.
   */
  private void initialize(RoutingContext ctx, McpSchema.JSONRPCRequest request, UUID tenant) {
    McpSchema.InitializeRequest init;
    io.vertx.core.json.JsonObject recorded;
    try {
      McpSchema.InitializeRequest asked = json.convertValue(request.params(), new TypeRef<McpSchema.InitializeRequest>() {});
      // What a replica needs to serve the session; the request's _meta is not kept.
      init = new McpSchema.InitializeRequest(asked.protocolVersion(), asked.capabilities(), asked.clientInfo());
      String encoded = json.writeValueAsString(init);
      if (encoded.length() > MAX_INIT_CHARS || encoded.contains("\\u0000")) {
        reply(ctx, 400, McpSchema.ErrorCodes.INVALID_PARAMS, "the initialize request's params take " + encoded.length()
            + " characters (at most " + MAX_INIT_CHARS + " are kept for a session, and no NUL character)");
        return;
      }
      recorded = new io.vertx.core.json.JsonObject(encoded);
    } catch (RuntimeException | IOException e) {
      reply(ctx, 400, McpSchema.ErrorCodes.INVALID_PARAMS, "the initialize request's params are malformed");
      return;
    }
    UUID id = UUID.randomUUID();
    store.open(tenant, id, recorded, MAX_SESSIONS_PER_TENANT).onComplete(opened -> {
      if (opened.failed()) {
        ctx.fail(opened.cause());
        return;
      }
      if (!opened.result().opened()) {
        reply(ctx, 429, McpSchema.ErrorCodes.INTERNAL_ERROR, "this tenant holds " + opened.result().held()
            + " MCP sessions, the most it may (on all replicas together); end one with DELETE /mcp or let one idle out");
        return;
      }
      McpStreamableServerSession.McpStreamableServerSessionInit started = sessions0.startSession(init);
      Held held = new Held(started.session(), id.toString(), tenant, new long[] {System.currentTimeMillis()});
      sessions.put(held.id(), held);
      started.initResult().subscribe(result -> {
        try {
          ctx.response().setStatusCode(200).putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
              .putHeader(SESSION_HEADER, held.id())
              .end(json.writeValueAsString(new McpSchema.JSONRPCResponse(McpSchema.JSONRPC_VERSION, request.id(),
                  result, null)));
        } catch (IOException e) {
          failed(ctx, e);
        }
      }, e -> {
        sessions.remove(held.id());
        store.close(tenant, id);
        failed(ctx, e);
      });
    });
  }

  /**
   * Runs {@code then} with the request's session, if it names one of its own tenant's that is not
   * idle, on whichever replica it was opened; otherwise the reply says why. A session this replica
   * has not served yet is built from its recorded initialize parameters; one that is gone (ended
   * through another replica, idle) is dropped here too.
   */
  private void session(RoutingContext ctx, UUID tenant, java.util.function.Consumer<Held> then) {
    String raw = ctx.request().getHeader(SESSION_HEADER);
    if (raw == null || raw.isBlank()) {
      reply(ctx, 400, McpSchema.ErrorCodes.INVALID_REQUEST, "the Mcp-Session-Id header is required after initialize");
      return;
    }
    UUID id;
    try {
      id = UUID.fromString(raw.strip());
    } catch (IllegalArgumentException e) {
      unknown(ctx, raw);
      return;
    }
    String key = id.toString();
    store.use(tenant, id).onComplete(found -> {
      if (found.failed()) {
        ctx.fail(found.cause());
        return;
      }
      Held held = sessions.get(key);
      if (found.result().isEmpty()) {
        if (held != null && sessions.remove(key, held)) {
          held.session().close();
        }
        unknown(ctx, raw);
        return;
      }
      if (held == null || !held.tenant().equals(tenant)) {
        McpSchema.InitializeRequest init;
        try {
          init = json.readValue(found.result().get().encode(), new TypeRef<McpSchema.InitializeRequest>() {});
        } catch (IOException | RuntimeException e) {
          failed(ctx, e);
          return;
        }
        // Not subscribed to: the initialize result went to the client when the session was opened.
        // Two requests building a copy at once each use their own: the copies are alike.
        held = new Held(sessions0.startSession(init).session(), key, tenant, new long[] {0});
        sessions.put(key, held);
      }
      held.lastUsed()[0] = System.currentTimeMillis();
      then.accept(held);
    });
  }

  private static void unknown(RoutingContext ctx, String raw) {
    String shown = raw.length() > 64 ? raw.substring(0, 64) + "..." : raw;
    reply(ctx, 404, McpSchema.ErrorCodes.INVALID_REQUEST, "no MCP session " + shown + "; initialize a new one");
  }

  private void get(RoutingContext ctx) {
    if (!String.valueOf(ctx.request().getHeader(HttpHeaders.ACCEPT)).contains("text/event-stream")) {
      reply(ctx, 406, McpSchema.ErrorCodes.INVALID_REQUEST, "GET /mcp is the server's event stream: accept text/event-stream");
      return;
    }
    session(ctx, ApiRoutes.tenant(ctx), held -> {
      HttpServerResponse response = EventStream.open(ctx.response(), vertx, heartbeat).putHeader(SESSION_HEADER, held.id());
      StreamTransport stream = new StreamTransport(response, vertx.getOrCreateContext(), () -> {}, ctx.get(RequestIds.HEADER));
      var listening = held.session().listeningStream(stream);
      stream.onClose(listening::close);
      response.writeHead();
    });
  }

  /** Ends the session on every replica: the others find it gone at its next request. */
  private void delete(RoutingContext ctx) {
    UUID tenant = ApiRoutes.tenant(ctx);
    session(ctx, tenant, held -> store.close(tenant, UUID.fromString(held.id())).onComplete(closed -> {
      if (closed.failed()) {
        ctx.fail(closed.cause());
        return;
      }
      sessions.remove(held.id(), held);
      held.session().delete().contextWrite(c -> c.put(McpTransportContext.KEY, context(ctx)))
          .subscribe(null, e -> failed(ctx, e), () -> ctx.response().setStatusCode(204).end());
    }));
  }

  private static void accepted(RoutingContext ctx) {
    ctx.response().setStatusCode(202).end();
  }

  private void failed(RoutingContext ctx, Throwable e) {
    log.warn("mcp request {} failed: {}", ctx.<String>get(RequestIds.HEADER), e.toString());
    if (!ctx.response().headWritten()) {
      reply(ctx, 500, McpSchema.ErrorCodes.INTERNAL_ERROR, "the MCP request failed in the gateway; its log has the"
          + " details, under request " + ctx.<String>get(RequestIds.HEADER));
    }
  }

  /** A message the session did not take: 400, with the SDK's reason in the log only. */
  private static void refused(RoutingContext ctx, Object id, int code, Throwable e, String message) {
    log.debug("mcp request {}: {}: {}", ctx.<String>get(RequestIds.HEADER), message, e.toString());
    if (!ctx.response().headWritten()) {
      reply(ctx, 400, new io.vertx.core.json.JsonObject().put("jsonrpc", McpSchema.JSONRPC_VERSION).put("id", id)
          .put("error", new io.vertx.core.json.JsonObject().put("code", code).put("message", message)));
    }
  }

  /** A JSON-RPC error body (without an id: it answers no request) with an HTTP status. */
  private static void reply(RoutingContext ctx, int status, int code, String message) {
    reply(ctx, status, new io.vertx.core.json.JsonObject().put("jsonrpc", McpSchema.JSONRPC_VERSION).put("id", null)
        .put("error", new io.vertx.core.json.JsonObject().put("code", code).put("message", message)));
  }

  private static void reply(RoutingContext ctx, int status, io.vertx.core.json.JsonObject body) {
    ctx.response().setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, "application/json").end(body.encode());
  }

  /** Whether a request is MCP's, whose errors (any route failure, from 401 to 413) are JSON-RPC's. */
  static boolean speaksJsonRpc(RoutingContext ctx) {
    return PATH.equals(ctx.request().path());
  }

  /**
   * An API error as a JSON-RPC error (id null: it answers no message the gateway read), the API's
   * code in its data: for {@link ErrorMapping}, on {@code /mcp}.
   */
  static io.vertx.core.json.JsonObject error(ApiError e) {
    int code = e.code().equals("malformed_json") ? McpSchema.ErrorCodes.PARSE_ERROR
        : e.status() >= 500 ? McpSchema.ErrorCodes.INTERNAL_ERROR : McpSchema.ErrorCodes.INVALID_REQUEST;
    return new io.vertx.core.json.JsonObject().put("jsonrpc", McpSchema.JSONRPC_VERSION).putNull("id")
        .put("error", new io.vertx.core.json.JsonObject().put("code", code).put("message", WireFormat.message(e))
            .put("data", new io.vertx.core.json.JsonObject().put("code", e.code())));
  }

  /** One HTTP response as an SSE stream of JSON-RPC messages; writes happen on the request's context. */
  private final class StreamTransport implements McpStreamableServerTransport {
    private final HttpServerResponse response;
    private final Context context;
    private final String requestId;
    private volatile boolean closed;
    private volatile boolean answered;
    private volatile Runnable gone;

    /**
     * @param gone      run when the client's connection closes before the stream ended
     * @param requestId the HTTP request's id, which an internal error names
     */
    StreamTransport(HttpServerResponse response, Context context, Runnable gone, String requestId) {
      this.response = response;
      this.context = context;
      this.gone = gone;
      this.requestId = requestId;
      response.closeHandler(v -> {
        closed = true;
        this.gone.run();
      });
    }

    void onClose(Runnable also) {
      Runnable before = gone;
      gone = () -> {
        before.run();
        also.run();
      };
    }

    @Override
    public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
      return sendMessage(message, null);
    }

    /** Answers request {@code id} with an internal error if nothing answered it yet, and ends the stream. */
    void answerFailure(Object id) {
      if (answered) {
        close();
        return;
      }
      sendMessage(McpSchema.JSONRPCResponse.error(id, new McpSchema.JSONRPCResponse.JSONRPCError(
          McpSchema.ErrorCodes.INTERNAL_ERROR, "internal error")), null)
          .subscribe(null, e -> close(), this::close);
    }

    @Override
    public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message, String messageId) {
      McpSchema.JSONRPCMessage shown = shown(message);
      if (shown instanceof McpSchema.JSONRPCResponse) {
        answered = true;
      }
      return Mono.create(sink -> {
        String data;
        try {
          data = json.writeValueAsString(shown);
        } catch (IOException e) {
          sink.error(e);
          return;
        }
        context.runOnContext(v -> {
          if (!closed && !response.ended() && !response.closed()) {
            response.write((messageId == null ? "" : "id: " + messageId + "\n") + "event: message\ndata: " + data + "\n\n");
          }
          sink.success();
        });
      });
    }

    /**
     * An error as the client may see it: an internal one names the request (the SDK would send its
     * exception's message and causes, which may hold anything, host paths included: logged here
     * instead); any other without host paths.
     */
    private McpSchema.JSONRPCMessage shown(McpSchema.JSONRPCMessage message) {
      if (!(message instanceof McpSchema.JSONRPCResponse r) || r.error() == null) {
        return message;
      }
      McpSchema.JSONRPCResponse.JSONRPCError e = r.error();
      if (e.code() != null && e.code() == McpSchema.ErrorCodes.INTERNAL_ERROR) {
        log.warn("mcp request {}: internal error answered to the client: {} {}", requestId, e.message(), e.data());
        return McpSchema.JSONRPCResponse.error(r.id(), new McpSchema.JSONRPCResponse.JSONRPCError(e.code(),
            "internal error; the gateway log has the details, under request " + requestId));
      }
      Object data = e.data() instanceof String d ? dev.quarry.config.HostPaths.redact(d) : e.data();
      return McpSchema.JSONRPCResponse.error(r.id(), new McpSchema.JSONRPCResponse.JSONRPCError(e.code(),
          dev.quarry.config.HostPaths.redact(e.message()), data));
    }

    @Override
    public <T> T unmarshalFrom(Object data, TypeRef<T> type) {
      return json.convertValue(data, type);
    }

    @Override
    public Mono<Void> closeGracefully() {
      return Mono.fromRunnable(this::close);
    }

    @Override
    public void close() {
      closed = true;
      context.runOnContext(v -> {
        if (!response.ended() && !response.closed()) {
          response.end();
        }
      });
    }
  }
}
