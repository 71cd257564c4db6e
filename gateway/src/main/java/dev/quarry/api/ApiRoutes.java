package dev.quarry.api;

import dev.quarry.ingest.IngestException;
import dev.quarry.ingest.IngestRequest;
import dev.quarry.ingest.IngestProgress;
import dev.quarry.ingest.IngestResult;
import dev.quarry.ingest.IngestService;
import dev.quarry.config.Config;
import dev.quarry.callbacks.CallbackService;
import dev.quarry.sandbox.SandboxCapacityExhausted;
import dev.quarry.sandbox.SandboxQuotaExceeded;
import dev.quarry.sandbox.SandboxService;
import dev.quarry.sandbox.Scope;
import dev.quarry.search.SearchService;
import dev.quarry.store.DatabaseUnavailable;
import dev.quarry.store.DocumentStore;
import dev.quarry.store.DocumentsFs;
import dev.quarry.config.Quota;
import dev.quarry.tenancy.QuotaExceeded;
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
import io.vertx.ext.web.handler.HttpException;
import io.vertx.sqlclient.Pool;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.regex.Pattern;
import java.util.concurrent.CompletionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP API, defined once for production and tests. Each route maps to one named handler;
 * every failure travels through {@code ctx.fail} to {@link #renderError}, the only place that
 * shapes an error body: {@code {"error": {"code": "...", "message": "..."}}}.
 */
public final class ApiRoutes {
  private static final Logger log = LoggerFactory.getLogger(ApiRoutes.class);
  private static final long JSON_BODY_LIMIT = 1024 * 1024;
  /** The largest page GET /v1/documents?limit= answers. */
  static final int DOCUMENTS_PAGE_MAX = 1000;
  private static final long ADMIN_BODY_LIMIT = 16 * 1024;
  private static final String FORM_DECODER_PACKAGE = "io.netty.handler.codec.http.multipart.";
  private static final String JSON = "application/json";

  private final Vertx vertx;
  private final Pool pool;
  private final Config config;
  private final IngestService ingestService;
  private final DocumentStore documentStore;
  private final SearchService searchService;
  private final SandboxService sandboxes;
  private final CallbackService callbacks;
  private final TenantStore tenants;
  private final Quotas quotas;
  private final AdminRoutes admin;
  private final Authentication auth;
  private AnalysisRoutes analyses;
  /** The port this gateway serves on, once it does: MCP's tools call the REST API through it. */
  private volatile int port;
  private dev.quarry.agent.AnalysisService analysisService;

  /** {@code /healthz}, {@code /readyz} and {@code /metrics} are mounted beside these by ops.OpsRoutes. */
  public ApiRoutes(Vertx vertx, Pool pool, Config config, IngestService ingestService,
      DocumentStore documentStore, SearchService searchService, TenantStore tenants, Quotas quotas,
      DocumentsFs documentsFs) {
    this(vertx, pool, config, ingestService, documentStore, searchService, tenants, quotas, documentsFs,
        null, null);
  }

  /**
   * @param sandboxes null when this gateway runs no sandboxes (POST /v1/executions answers 503)
   * @param callbacks what an execution's sandbox may call; null with no sandboxes
   */
  public ApiRoutes(Vertx vertx, Pool pool, Config config, IngestService ingestService,
      DocumentStore documentStore, SearchService searchService, TenantStore tenants, Quotas quotas,
      DocumentsFs documentsFs, SandboxService sandboxes, CallbackService callbacks) {
    this.sandboxes = sandboxes;
    this.callbacks = callbacks;
    this.vertx = vertx;
    this.pool = pool;
    this.config = config;
    this.ingestService = ingestService;
    this.documentStore = documentStore;
    this.searchService = searchService;
    this.tenants = tenants;
    this.quotas = quotas;
    this.admin = new AdminRoutes(tenants, quotas, documentsFs, this::endTenantWork);
    this.auth = new Authentication(config.tenancy(), tenants, quotas);
  }

  /** A tenant is being deleted: its analyses end (failed, TenantDeleted) and its sandboxes go at once. */
  private Future<Void> endTenantWork(UUID tenant) {
    if (analysisService != null) {
      analysisService.endTenant(tenant);
    }
    return sandboxes == null ? Future.succeededFuture() : sandboxes.removeTenant(tenant).mapEmpty();
  }

  /** Serves the analyses API too. */
  public ApiRoutes withAnalyses(dev.quarry.agent.AnalysisService service) {
    this.analysisService = service;
    this.analyses = new AnalysisRoutes(service, config.bodyTimeoutMs(),
        config.sseHeartbeat());
    return this;
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
   * Every route starts with its own authentication ({@link Authentication}): whichever route a
   * request reaches, that route decides who may ask. Before any route, a path not in canonical form
   * is refused, so that the path a client wrote is the path the router matched.
   */
  /**
   * Deletes upload files a gateway that died mid-request left behind: those untouched for longer
   * than the body timeout (a live upload is written to until it has all arrived, and read at once).
   * Blocking; returns how many went.
   */
  public static int sweepUploads(Config config) {
    return UploadBody.sweep(uploadsDir(config), java.time.Duration.ofMillis(config.bodyTimeoutMs()));
  }

  public Router router() {
    Router router = Router.router(vertx);
    router.route().handler(ApiRoutes::requestId);
    router.route().handler(Authentication::canonicalPath);
    Handler<RoutingContext> tenant = auth.tenant();
    long bodyTimeout = config.bodyTimeoutMs();
    router.post("/v1/documents").handler(tenant)
        .handler(new UploadBody(vertx, config.maxUploadBytes(), uploadsDir(config), bodyTimeout,
            LimitedBody.json(config.maxUploadBytes(), bodyTimeout)))
        .handler(this::ingest);
    router.get("/v1/documents").handler(tenant).handler(this::listDocuments);
    router.get("/v1/documents/:id").handler(tenant).handler(this::getDocument);
    router.delete("/v1/documents/:id").handler(tenant).handler(this::deleteDocument);
    router.get("/v1/documents/:id/items").handler(tenant).handler(this::items);
    router.get("/v1/documents/:id/toc").handler(tenant).handler(this::toc);
    router.get("/v1/documents/:id/content").handler(tenant).handler(this::content);
    router.get("/v1/documents/:id/chunks/:chunk").handler(tenant).handler(this::chunk);
    router.post("/v1/search").handler(tenant).handler(LimitedBody.json(JSON_BODY_LIMIT, bodyTimeout)).handler(this::search);
    router.post("/v1/executions").handler(tenant).handler(LimitedBody.json(JSON_BODY_LIMIT, bodyTimeout)).handler(this::execute);
    admin.mount(router, auth.admin(), LimitedBody.json(ADMIN_BODY_LIMIT, bodyTimeout));
    if (analyses != null) {
      analyses.mount(router, tenant);
      new OpenAiRoutes(analyses).mount(router, tenant, LimitedBody.json(JSON_BODY_LIMIT, bodyTimeout));
    }
    McpTransport mcp = new McpTransport(vertx, config.sseHeartbeat());
    McpServer.async(mcp)
        .serverInfo("quarry", "0.1.0")
        .instructions("Quarry answers research questions over your documents. Use search and read_document to look"
            + " things up, run_code to compute over them in a sandbox, and ask for a whole analysis with its program.")
        .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
        .tools(new McpTools(vertx, analyses, () -> port).specifications())
        .build();
    mcp.mount(router, tenant, LimitedBody.json(JSON_BODY_LIMIT, bodyTimeout));
    new ConsoleRoutes().mount(router); // public: static files only, no secret; see ConsoleRoutes
    router.route().failureHandler(this::renderError);
    router.errorHandler(404, this::renderError);
    router.errorHandler(405, this::renderError);
    return router;
  }

  static final String REQUEST_ID = "X-Request-Id";
  private static final Pattern CLIENT_REQUEST_ID = Pattern.compile("[A-Za-z0-9._:-]{1,128}");

  /**
   * Gives every response an {@code X-Request-Id}: the client's own when it sent one that is safe to
   * echo and log (up to 128 letters, digits and {@code ._:-}), else a new one. The gateway's log
   * names it with any unexpected failure, so a user's report can be matched to the log.
   */
  private static void requestId(RoutingContext ctx) {
    String given = ctx.request().getHeader(REQUEST_ID);
    String id = given != null && CLIENT_REQUEST_ID.matcher(given).matches()
        ? given : "req_" + UUID.randomUUID().toString().replace("-", "");
    ctx.put(REQUEST_ID, id);
    ctx.response().putHeader(REQUEST_ID, id);
    ctx.next();
  }

  /** The tenant whose key the route admitted; refuses (401) a request that holds no tenant's key. */
  static UUID tenant(RoutingContext ctx) {
    return Authentication.tenantOf(ctx);
  }

  private void ingest(RoutingContext ctx) {
    UUID tenant = tenant(ctx);
    IngestEvents events = wantsStream(ctx) ? new IngestEvents(ctx.response(), vertx.getOrCreateContext(), config.sseHeartbeat()) : null;
    quotas.limits(tenant)
        .compose(limits -> ingestRequest(ctx).compose(request -> {
          long maxDocument = limits.of(Quota.DOCUMENT_BYTES);
          if (request.bytes().length > maxDocument) {
            return Future.failedFuture(new QuotaExceeded(Quota.DOCUMENT_BYTES, maxDocument, 3600,
                "'" + request.fileName() + "' has " + request.bytes().length + " bytes"));
          }
          return ingestService.ingest(tenant, request, limits.of(Quota.STORED_BYTES),
              events == null ? IngestProgress.NONE : events);
        }))
        .eventually(() -> discardUploads(ctx))
        .onSuccess(result -> {
          if (events != null) {
            events.result(WireFormat.ingested(result));
          } else {
            replyJson(ctx, result.status() == IngestResult.Status.UNCHANGED ? 200 : 201, WireFormat.ingested(result));
          }
        })
        .onFailure(err -> {
          if (events != null && events.started()) {
            events.error(toApiError(ctx, unwrap(err)));
          } else {
            ctx.fail(err);
          }
        });
  }

  /** Progress as server-sent events: {@code Accept: text/event-stream} or {@code ?stream=true}. */
  private static boolean wantsStream(RoutingContext ctx) {
    String stream = ctx.request().getParam("stream");
    if (stream != null) {
      if (!stream.equals("true") && !stream.equals("false")) {
        throw ApiError.badRequest("invalid_stream", "query parameter 'stream' must be true or false");
      }
      return stream.equals("true");
    }
    return EventStream.accepted(ctx);
  }

  private Future<IngestRequest> ingestRequest(RoutingContext ctx) {
    String contentType = Optional.ofNullable(ctx.request().getHeader(HttpHeaders.CONTENT_TYPE)).orElse("");
    UploadBody.Received upload = UploadBody.received(ctx);
    if (upload != null) {
      String fileName = upload.fileName() == null || upload.fileName().isBlank() ? "upload" : upload.fileName();
      String uri = Optional.ofNullable(upload.fields().get("uri")).filter(s -> !s.isBlank()).orElse(fileName);
      String title = Optional.ofNullable(upload.fields().get("title")).filter(s -> !s.isBlank()).orElse(null);
      return vertx.fileSystem().readFile(upload.file().toString())
          .map(bytes -> new IngestRequest(fileName, uri, title, upload.contentType(), bytes.getBytes()));
    }
    if (contentType.startsWith(JSON)) {
      return Future.succeededFuture(Requests.ingest(Requests.jsonObject(ctx.body().buffer())));
    }
    return Future.failedFuture(new ApiError(415, "unsupported_media_type",
        "send a document as multipart/form-data (field 'file') or as application/json "
            + "{title, uri, content, content_type}; got Content-Type '" + contentType + "'"));
  }

  private void listDocuments(RoutingContext ctx) {
    Integer limit = Requests.limit(ctx.request().getParam("limit"), null, DOCUMENTS_PAGE_MAX);
    DocumentStore.ListPosition after = Requests.documentsCursor(ctx.request().getParam("cursor"));
    documentStore.page(tenant(ctx), after, limit)
        .onSuccess(page -> replyJson(ctx, 200, WireFormat.documents(page)))
        .onFailure(ctx::fail);
  }

  private void getDocument(RoutingContext ctx) {
    UUID id = Requests.documentId(ctx.pathParam("id"));
    documentStore.get(tenant(ctx), id)
        .map(found -> found.orElseThrow(() -> missing(id)))
        .onSuccess(document -> replyJson(ctx, 200, WireFormat.document(document)))
        .onFailure(ctx::fail);
  }

  private void deleteDocument(RoutingContext ctx) {
    UUID id = Requests.documentId(ctx.pathParam("id"));
    documentStore.delete(tenant(ctx), id)
        .compose(deleted -> deleted ? Future.succeededFuture() : Future.failedFuture(missing(id)))
        .onSuccess(v -> ctx.response().setStatusCode(204).end())
        .onFailure(ctx::fail);
  }

  private void items(RoutingContext ctx) {
    UUID id = Requests.documentId(ctx.pathParam("id"));
    documentStore.items(tenant(ctx), id)
        .map(found -> found.orElseThrow(() -> missing(id)))
        .onSuccess(items -> ctx.response()
            .putHeader(HttpHeaders.CONTENT_TYPE, "application/x-ndjson")
            .end(DocumentsFs.itemsJsonl(items)))
        .onFailure(ctx::fail);
  }

  private void toc(RoutingContext ctx) {
    UUID id = Requests.documentId(ctx.pathParam("id"));
    documentStore.toc(tenant(ctx), id)
        .map(found -> found.orElseThrow(() -> missing(id)))
        .onSuccess(toc -> replyJson(ctx, 200, toc))
        .onFailure(ctx::fail);
  }

  private void content(RoutingContext ctx) {
    UUID id = Requests.documentId(ctx.pathParam("id"));
    documentStore.content(tenant(ctx), id)
        .map(found -> found.orElseThrow(() -> missing(id)))
        .onSuccess(text -> ctx.response().putHeader(HttpHeaders.CONTENT_TYPE, "text/plain; charset=utf-8").end(text))
        .onFailure(ctx::fail);
  }

  /** A chunk a citation or a hit names, with the range of items it came from. */
  private void chunk(RoutingContext ctx) {
    UUID id = Requests.documentId(ctx.pathParam("id"));
    UUID chunk = Requests.uuid("chunk id", ctx.pathParam("chunk"));
    documentStore.chunk(tenant(ctx), id, chunk)
        .map(found -> found.orElseThrow(() -> ApiError.notFound("no chunk with id " + chunk + " in document " + id)))
        .onSuccess(body -> replyJson(ctx, 200, body))
        .onFailure(ctx::fail);
  }

  private void search(RoutingContext ctx) {
    UUID tenant = tenant(ctx);
    searchService.search(tenant, Requests.search(Requests.jsonObject(ctx.body().buffer()), config))
        .onSuccess(hits -> replyJson(ctx, 200, WireFormat.results(hits)))
        .onFailure(ctx::fail);
  }

  private void execute(RoutingContext ctx) {
    UUID tenant = tenant(ctx);
    new Executions(sandboxes, documentStore, scope -> callbacks.forTenant(tenant, scope), config.sseHeartbeat())
        .handle(ctx, tenant);
  }

  private static ApiError missing(UUID id) {
    return ApiError.notFound("no document with id " + id);
  }

  static void replyJson(RoutingContext ctx, int status, JsonObject body) {
    ctx.response().setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, JSON).end(body.encode());
  }

  /** The one place where failures become responses. */
  private void renderError(RoutingContext ctx) {
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
    JsonObject body = OpenAiRoutes.speaksOpenAi(ctx)
        ? WireFormat.openAiError(error) : WireFormat.error(error);
    discardUploads(ctx).onComplete(done -> replyJson(ctx, error.status(), body));
  }

  /**
   * Deletes the request's spooled upload before the reply goes out, so that no client ever sees a
   * reply while its upload still sits on disk ({@link UploadBody} deletes it on every other path).
   */
  private static Future<Void> discardUploads(RoutingContext ctx) {
    return UploadBody.discard(ctx);
  }

  private ApiError toApiError(RoutingContext ctx) {
    return toApiError(ctx, unwrap(ctx.failure()));
  }

  private ApiError toApiError(RoutingContext ctx, Throwable failure) {
    int status = ctx.statusCode();
    return switch (failure) {
      case ApiError e -> e;
      case IngestException e -> ingestError(e);
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
      case null -> fromStatus(ctx, status, null);
      case Exception e when e.getClass().getName().startsWith(FORM_DECODER_PACKAGE) ->
          // Netty's form decoder, reading a form body the client sent where none was expected or
          // one it built wrong: the client's doing, so a 4xx that says so.
          e.getClass().getSimpleName().startsWith("TooLong") || e.getClass().getSimpleName().startsWith("TooMany")
              ? new ApiError(413, "too_large", "the form body has a field too large or too many fields")
              : ApiError.badRequest("bad_request", "the form body could not be read");
      default -> {
        log.error("unexpected failure on {} {} (request {})", ctx.request().method(), ctx.request().path(),
            ctx.<String>get(REQUEST_ID), failure);
        yield new ApiError(500, "internal", "internal error; the gateway log has the details, under request "
            + ctx.<String>get(REQUEST_ID));
      }
    };
  }

  private static ApiError ingestError(IngestException e) {
    int status = switch (e.reason()) {
      case UNSUPPORTED_TYPE -> 415;
      case TOO_LARGE -> 413;
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
        log.error("unexpected status {} on {} without a cause (request {})", status, where, ctx.<String>get(REQUEST_ID));
        yield new ApiError(500, "internal", "internal error; the gateway log has the details, under request "
            + ctx.<String>get(REQUEST_ID));
      }
    };
  }

  private static Throwable unwrap(Throwable t) {
    while (t instanceof CompletionException && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }
}
