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
 * client fills in. Sessions are held in memory, at most {@value #MAX_SESSIONS_PER_TENANT} per
 * tenant, and forgotten after {@value #IDLE_MINUTES} idle minutes.
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

  private record Held(McpStreamableServerSession session, UUID tenant, long[] lastUsed) {}

  private final McpJsonMapper json = McpJsonDefaults.getMapper();
  private final Map<String, Held> sessions = new ConcurrentHashMap<>();
  private final Vertx vertx;
  private final long sweeper;
  private volatile McpStreamableServerSession.Factory sessions0;
  private volatile boolean closing;

  private final java.time.Duration heartbeat;

  McpTransport(Vertx vertx, java.time.Duration heartbeat) {
    this.heartbeat = heartbeat;
    this.vertx = vertx;
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
    try {
      message = McpSchema.deserializeJsonRpcMessage(json, ctx.body().asString());
    } catch (IOException | RuntimeException e) {
      reply(ctx, 400, McpSchema.ErrorCodes.PARSE_ERROR, "the body is not a JSON-RPC message");
      return;
    }
    McpTransportContext context = context(ctx);
    UUID tenant = ApiRoutes.tenant(ctx);
    if (message instanceof McpSchema.JSONRPCRequest request && McpSchema.METHOD_INITIALIZE.equals(request.method())) {
      initialize(ctx, request, tenant);
      return;
    }
    Held held = session(ctx, tenant);
    if (held == null) {
      return;
    }
    switch (message) {
      case McpSchema.JSONRPCResponse response -> held.session().accept(response)
          .contextWrite(c -> c.put(McpTransportContext.KEY, context))
          .subscribe(null, e -> failed(ctx, e), () -> accepted(ctx));
      case McpSchema.JSONRPCNotification notification -> held.session().accept(notification)
          .contextWrite(c -> c.put(McpTransportContext.KEY, context))
          .subscribe(null, e -> failed(ctx, e), () -> accepted(ctx));
      case McpSchema.JSONRPCRequest request -> {
        HttpServerResponse response = EventStream.open(ctx.response(), vertx, heartbeat).putHeader(SESSION_HEADER, held.session().getId());
        io.vertx.core.Promise<Void> gone = io.vertx.core.Promise.promise();
        StreamTransport stream = new StreamTransport(response, vertx.getOrCreateContext(), gone::tryComplete);
        McpTransportContext withGone = context(ctx, gone.future());
        held.session().responseStream(request, stream)
            .contextWrite(c -> c.put(McpTransportContext.KEY, withGone))
            .subscribe(null, e -> {
              log.warn("mcp session {}: request {} failed: {}", held.session().getId(), request.method(), e.toString());
              stream.close();
            });
      }
      default -> reply(ctx, 400, McpSchema.ErrorCodes.INVALID_REQUEST, "unknown JSON-RPC message type");
    }
  }

  private void initialize(RoutingContext ctx, McpSchema.JSONRPCRequest request, UUID tenant) {
    long held = sessions.values().stream().filter(h -> h.tenant().equals(tenant)).count();
    if (held >= MAX_SESSIONS_PER_TENANT) {
      reply(ctx, 429, McpSchema.ErrorCodes.INTERNAL_ERROR, "this tenant holds " + held
          + " MCP sessions, the most it may; end one with DELETE /mcp or let one idle out");
      return;
    }
    McpSchema.InitializeRequest init;
    try {
      init = json.convertValue(request.params(), new TypeRef<McpSchema.InitializeRequest>() {});
    } catch (RuntimeException e) {
      reply(ctx, 400, McpSchema.ErrorCodes.INVALID_PARAMS, "the initialize request's params are malformed");
      return;
    }
    McpStreamableServerSession.McpStreamableServerSessionInit started = sessions0.startSession(init);
    String id = started.session().getId();
    sessions.put(id, new Held(started.session(), tenant, new long[] {System.currentTimeMillis()}));
    started.initResult().subscribe(result -> {
      try {
        ctx.response().setStatusCode(200).putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
            .putHeader(SESSION_HEADER, id)
            .end(json.writeValueAsString(new McpSchema.JSONRPCResponse(McpSchema.JSONRPC_VERSION, request.id(),
                result, null)));
      } catch (IOException e) {
        failed(ctx, e);
      }
    }, e -> {
      sessions.remove(id);
      failed(ctx, e);
    });
  }

  /** The request's session, if it names one of its own tenant's; else the reply says why and null. */
  private Held session(RoutingContext ctx, UUID tenant) {
    String id = ctx.request().getHeader(SESSION_HEADER);
    if (id == null || id.isBlank()) {
      reply(ctx, 400, McpSchema.ErrorCodes.INVALID_REQUEST, "the Mcp-Session-Id header is required after initialize");
      return null;
    }
    Held held = sessions.get(id);
    if (held == null || !held.tenant().equals(tenant)) {
      reply(ctx, 404, McpSchema.ErrorCodes.INVALID_REQUEST, "no MCP session " + id + "; initialize a new one");
      return null;
    }
    held.lastUsed()[0] = System.currentTimeMillis();
    return held;
  }

  private void get(RoutingContext ctx) {
    if (!String.valueOf(ctx.request().getHeader(HttpHeaders.ACCEPT)).contains("text/event-stream")) {
      reply(ctx, 406, McpSchema.ErrorCodes.INVALID_REQUEST, "GET /mcp is the server's event stream: accept text/event-stream");
      return;
    }
    Held held = session(ctx, ApiRoutes.tenant(ctx));
    if (held == null) {
      return;
    }
    HttpServerResponse response = EventStream.open(ctx.response(), vertx, heartbeat).putHeader(SESSION_HEADER, held.session().getId());
    StreamTransport stream = new StreamTransport(response, vertx.getOrCreateContext(), () -> {});
    var listening = held.session().listeningStream(stream);
    stream.onClose(listening::close);
    response.writeHead();
  }

  private void delete(RoutingContext ctx) {
    Held held = session(ctx, ApiRoutes.tenant(ctx));
    if (held == null) {
      return;
    }
    sessions.remove(held.session().getId());
    held.session().delete().contextWrite(c -> c.put(McpTransportContext.KEY, context(ctx)))
        .subscribe(null, e -> failed(ctx, e), () -> ctx.response().setStatusCode(204).end());
  }

  private static void accepted(RoutingContext ctx) {
    ctx.response().setStatusCode(202).end();
  }

  private void failed(RoutingContext ctx, Throwable e) {
    log.warn("mcp request failed: {}", e.toString());
    if (!ctx.response().headWritten()) {
      reply(ctx, 500, McpSchema.ErrorCodes.INTERNAL_ERROR, "the MCP request failed in the gateway");
    }
  }

  /** A JSON-RPC error body (without an id: it answers no request) with an HTTP status. */
  private static void reply(RoutingContext ctx, int status, int code, String message) {
    String body = new io.vertx.core.json.JsonObject().put("jsonrpc", "2.0").put("id", null)
        .put("error", new io.vertx.core.json.JsonObject().put("code", code).put("message", message)).encode();
    ctx.response().setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, "application/json").end(body);
  }

  /** One HTTP response as an SSE stream of JSON-RPC messages; writes happen on the request's context. */
  private final class StreamTransport implements McpStreamableServerTransport {
    private final HttpServerResponse response;
    private final Context context;
    private volatile boolean closed;
    private volatile Runnable gone;

    /** @param gone run when the client's connection closes before the stream ended */
    StreamTransport(HttpServerResponse response, Context context, Runnable gone) {
      this.response = response;
      this.context = context;
      this.gone = gone;
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

    @Override
    public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message, String messageId) {
      return Mono.create(sink -> {
        String data;
        try {
          data = json.writeValueAsString(message);
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
