package dev.quarry.api;

import dev.quarry.agent.AnalysisService;
import dev.quarry.callbacks.CallbackService;
import dev.quarry.config.Config;
import dev.quarry.ingest.IngestService;
import dev.quarry.sandbox.SandboxService;
import dev.quarry.search.SearchService;
import dev.quarry.store.DocumentStore;
import dev.quarry.store.DocumentsFs;
import dev.quarry.tenancy.Quotas;
import dev.quarry.tenancy.TenantStore;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.spec.McpSchema;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.nio.file.Path;
import java.util.UUID;

/**
 * The HTTP API's route table, defined once for production and tests: which path goes to which
 * area's handler ({@link DocumentRoutes}, {@link SearchRoutes}, {@link AnalysisRoutes},
 * {@link OpenAiRoutes}, MCP, {@link AdminRoutes}, the console), each behind its own authentication.
 * Every failure travels through {@code ctx.fail} to {@link ErrorMapping}, the only place that shapes
 * an error body.
 */
public final class ApiRoutes {
  private static final long JSON_BODY_LIMIT = 1024 * 1024;
  /** The largest page GET /v1/documents?limit= answers. */
  static final int DOCUMENTS_PAGE_MAX = 1000;
  private static final long ADMIN_BODY_LIMIT = 16 * 1024;
  static final String JSON = "application/json";

  private final Vertx vertx;
  private final Config config;
  private final SandboxService sandboxes;
  private final DocumentRoutes documents;
  private final SearchRoutes search;
  private final AdminRoutes admin;
  private final Authentication auth;
  /** Request bodies each tenant is sending at once, across the replicas (R6-1). */
  private final BodyPlaces bodies;
  private final UploadSpace uploadSpace;
  /** Large answers under way, each written as its client takes it. */
  private final ResponseStreams streams;
  private AnalysisRoutes analyses;
  /** The port this gateway serves on, once it does: MCP's tools call the REST API through it. */
  private volatile int port;
  private AnalysisService analysisService;
  /** Where what every replica must share is kept (MCP sessions). */
  private io.vertx.sqlclient.Pool pool;

  /** {@code /healthz}, {@code /readyz} and {@code /metrics} are mounted beside these by gateway.OpsRoutes. */
  public ApiRoutes(Vertx vertx, Config config, IngestService ingestService,
      DocumentStore documentStore, SearchService searchService, TenantStore tenants, Quotas quotas,
      DocumentsFs documentsFs) {
    this(vertx, config, ingestService, documentStore, searchService, tenants, quotas, documentsFs, null, null);
  }

  /**
   * @param sandboxes null when this gateway runs no sandboxes (POST /v1/executions answers 503)
   * @param callbacks what an execution's sandbox may call; null with no sandboxes
   */
  public ApiRoutes(Vertx vertx, Config config, IngestService ingestService,
      DocumentStore documentStore, SearchService searchService, TenantStore tenants, Quotas quotas,
      DocumentsFs documentsFs, SandboxService sandboxes, CallbackService callbacks) {
    this.vertx = vertx;
    this.config = config;
    this.sandboxes = sandboxes;
    this.streams = new ResponseStreams(vertx);
    this.documents = new DocumentRoutes(vertx, config, ingestService, documentStore, documentsFs, quotas, streams);
    this.search = new SearchRoutes(config, searchService, documentStore, sandboxes, callbacks);
    this.admin = new AdminRoutes(tenants, quotas, documentsFs, this::endTenantWork, searchService::forgetTenant);
    this.auth = new Authentication(config.tenancy(), tenants, quotas);
    this.bodies = new BodyPlaces(quotas);
    this.uploadSpace = new UploadSpace((long) config.uploadSpaceMb() << 20, config.maxUploadBytes());
  }

  /** A tenant is being deleted: its analyses end (failed, TenantDeleted) and its sandboxes go at once. */
  private Future<Void> endTenantWork(UUID tenant) {
    if (analysisService != null) {
      analysisService.endTenant(tenant);
    }
    return sandboxes == null ? Future.succeededFuture() : sandboxes.removeTenant(tenant).mapEmpty();
  }

  /** Serves the analyses API too. */
  public ApiRoutes withAnalyses(AnalysisService service) {
    this.analysisService = service;
    this.analyses = new AnalysisRoutes(service, config.bodyTimeoutMs(), config.sseHeartbeat(), streams);
    return this;
  }

  /** Keeps what the replicas share in this database (MCP sessions, so that any replica serves any). */
  public ApiRoutes withDatabase(io.vertx.sqlclient.Pool pool) {
    this.pool = pool;
    return this;
  }

  /** The answers being written as their clients take them (tests look at what each has read). */
  ResponseStreams streams() {
    return streams;
  }

  /** Tells the routes the port the gateway serves them on (MCP's tools call the REST API there). */
  public void listeningOn(int port) {
    this.port = port;
  }

  /** Where multipart uploads are spooled while a request is handled. */
  public static Path uploadsDir(Config config) {
    return config.dataDir().resolve("uploads");
  }

  /**
   * Deletes upload files a gateway that died mid-request left behind: those untouched for longer
   * than the body timeout (a live upload is written to until it has all arrived, and read at once).
   * Blocking; returns how many went.
   */
  public static int sweepUploads(Config config) {
    return UploadBody.sweep(uploadsDir(config), java.time.Duration.ofMillis(config.bodyTimeoutMs()));
  }

  /**
   * Every route starts with its own authentication ({@link Authentication}): whichever route a
   * request reaches, that route decides who may ask. Before any route, a path not in canonical form
   * is refused, so that the path a client wrote is the path the router matched.
   */
  public Router router() {
    Router router = Router.router(vertx);
    router.route().handler(RequestIds::assign);
    router.route().handler(Authentication::canonicalPath);
    Handler<RoutingContext> tenant = auth.tenant();
    long bodyTimeout = config.bodyTimeoutMs();
    Handler<RoutingContext> jsonBody = LimitedBody.json(JSON_BODY_LIMIT, bodyTimeout);
    router.post("/v1/documents").handler(tenant).handler(uploadSpace.take()).handler(bodies.take())
        .handler(new UploadBody(vertx, config.maxUploadBytes(), uploadsDir(config), bodyTimeout,
            new SpooledBody(vertx, config.maxUploadBytes(), uploadsDir(config), bodyTimeout)))
        .handler(bodies.release())
        .handler(documents::ingest);
    router.get("/v1/documents").handler(tenant).handler(documents::listDocuments);
    router.get("/v1/documents/:id").handler(tenant).handler(documents::getDocument);
    router.delete("/v1/documents/:id").handler(tenant).handler(documents::deleteDocument);
    router.get("/v1/documents/:id/items").handler(tenant).handler(documents::items);
    router.get("/v1/documents/:id/toc").handler(tenant).handler(documents::toc);
    router.get("/v1/documents/:id/content").handler(tenant).handler(documents::content);
    router.get("/v1/documents/:id/chunks/:chunk").handler(tenant).handler(documents::chunk);
    Handler<RoutingContext> takeBody = bodies.take();
    Handler<RoutingContext> bodyRead = bodies.release();
    router.post("/v1/search").handler(tenant).handler(takeBody).handler(jsonBody).handler(bodyRead)
        .handler(search::search);
    router.post("/v1/executions").handler(tenant).handler(takeBody).handler(jsonBody).handler(bodyRead)
        .handler(search::execute);
    admin.mount(router, auth.admin(), LimitedBody.json(ADMIN_BODY_LIMIT, bodyTimeout));
    if (analyses != null) {
      analyses.mount(router, tenant, takeBody, bodyRead);
      new OpenAiRoutes(analyses).mount(router, tenant, takeBody, jsonBody, bodyRead);
    }
    if (pool == null) {
      throw new IllegalStateException("the routes need the database for MCP sessions: call withDatabase first");
    }
    McpTransport mcp = new McpTransport(vertx, config.sseHeartbeat(), pool);
    McpServer.async(mcp)
        .serverInfo("quarry", "0.1.0")
        .instructions("Quarry answers research questions over your documents. Use search and read_document to look"
            + " things up, run_code to compute over them in a sandbox, and ask for a whole analysis with its program.")
        .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
        .tools(new McpTools(vertx, analyses, () -> port).specifications())
        .build();
    mcp.mount(router, tenant, takeBody, jsonBody, bodyRead);
    new ConsoleRoutes().mount(router); // public: static files only, no secret; see ConsoleRoutes
    answerFailures(router);
    return router;
  }

  /**
   * Makes {@link ErrorMapping} answer every failure of {@code router}'s routes, and a request no
   * route takes (404, 405): on the API's router and on the metrics port's, so that both answer in
   * the API's error shape. Call it after the routes are mounted.
   */
  public static void answerFailures(Router router) {
    router.route().failureHandler(ErrorMapping::render);
    router.errorHandler(404, ErrorMapping::render);
    router.errorHandler(405, ErrorMapping::render);
  }

  /** The tenant whose key the route admitted; refuses (401) a request that holds no tenant's key. */
  static UUID tenant(RoutingContext ctx) {
    return Authentication.tenantOf(ctx);
  }

  /**
   * Answers with a JSON object written whole; one past {@link SlowClient#WATCHED_WHOLE} characters is
   * watched until its client has taken it, and cut if the client takes nothing (a search's results
   * with their contexts reach megabytes).
   */
  static void replyJson(RoutingContext ctx, int status, JsonObject body) {
    if (ProtocolErrors.answered(ctx.response())) {
      return; // refused for breaking HTTP while its handler worked: answered already
    }
    replyWhole(ctx, ctx.response().setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, JSON), body.encode());
  }

  /** Ends the response with {@code text}, watched as {@link #replyJson} says. */
  static void replyWhole(RoutingContext ctx, io.vertx.core.http.HttpServerResponse response, String text) {
    Future<Void> written = response.end(text);
    if (text.length() > SlowClient.WATCHED_WHOLE) {
      SlowClient.watchWritten(response, ctx.request().connection(), written, ctx.vertx(), SlowClient.STALL_LIMIT);
    }
  }
}
