package dev.quarry.api;

import dev.quarry.config.Config;
import dev.quarry.config.Quota;
import dev.quarry.ingest.IngestProgress;
import dev.quarry.ingest.IngestRequest;
import dev.quarry.ingest.IngestResult;
import dev.quarry.ingest.IngestService;
import dev.quarry.store.DocumentStore;
import dev.quarry.store.DocumentsFs;
import dev.quarry.tenancy.QuotaExceeded;
import dev.quarry.tenancy.Quotas;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.RoutingContext;
import java.util.Optional;
import java.util.UUID;

/**
 * The documents routes: ingest ({@code POST /v1/documents}, JSON or multipart, with progress as
 * server-sent events when asked), the tenant's list a page at a time, and each document's record,
 * items, table of contents, text and chunks, and its deletion.
 */
record DocumentRoutes(Vertx vertx, Config config, IngestService ingestService, DocumentStore documentStore,
    Quotas quotas) {

  void ingest(RoutingContext ctx) {
    UUID tenant = ApiRoutes.tenant(ctx);
    IngestEvents events = wantsStream(ctx) ? new IngestEvents(ctx.response(), vertx.getOrCreateContext(), config.sseHeartbeat()) : null;
    // A place in the tenant's concurrent_ingests is taken before the document is read into memory,
    // and held until its ingest has ended, whether or not the client is still there to hear of it.
    quotas.limits(tenant)
        .compose(limits -> quotas.acquireIngest(tenant).compose(place -> Future.succeededFuture(ctx)
            .compose(this::ingestRequest) // in the chain: a malformed JSON body throws, and the place goes back
            .compose(request -> {
              long maxDocument = limits.of(Quota.DOCUMENT_BYTES);
              if (request.bytes().length > maxDocument) {
                return Future.failedFuture(new QuotaExceeded(Quota.DOCUMENT_BYTES, maxDocument, 3600,
                    "'" + request.fileName() + "' has " + request.bytes().length + " bytes"));
              }
              return ingestService.ingest(tenant, request, limits.of(Quota.STORED_BYTES),
                  events == null ? IngestProgress.NONE : events);
            })
            // The answer waits for the place to be given back: the client's next ingest finds it free.
            .eventually(place::release)))
        .eventually(() -> ErrorMapping.discardUploads(ctx))
        .onSuccess(result -> {
          if (events != null) {
            events.result(WireFormat.ingested(result));
          } else {
            ApiRoutes.replyJson(ctx, result.status() == IngestResult.Status.UNCHANGED ? 200 : 201, WireFormat.ingested(result));
          }
        })
        .onFailure(err -> {
          if (events != null && events.started()) {
            events.error(ErrorMapping.toApiError(ctx, ErrorMapping.unwrap(err)));
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
    if (contentType.startsWith(ApiRoutes.JSON)) {
      return Future.succeededFuture(Requests.ingest(Requests.jsonObject(ctx.body().buffer())));
    }
    return Future.failedFuture(new ApiError(415, "unsupported_media_type",
        "send a document as multipart/form-data (field 'file') or as application/json "
            + "{title, uri, content, content_type}; got Content-Type '" + contentType + "'"));
  }

  void listDocuments(RoutingContext ctx) {
    Integer limit = Requests.limit(ctx.request().getParam("limit"), null, ApiRoutes.DOCUMENTS_PAGE_MAX);
    DocumentStore.ListPosition after = Requests.documentsCursor(ctx.request().getParam("cursor"));
    documentStore.page(ApiRoutes.tenant(ctx), after, limit)
        .onSuccess(page -> ApiRoutes.replyJson(ctx, 200, WireFormat.documents(page)))
        .onFailure(ctx::fail);
  }

  void getDocument(RoutingContext ctx) {
    UUID id = Requests.documentId(ctx.pathParam("id"));
    documentStore.get(ApiRoutes.tenant(ctx), id)
        .map(found -> found.orElseThrow(() -> missing(id)))
        .onSuccess(document -> ApiRoutes.replyJson(ctx, 200, WireFormat.document(document)))
        .onFailure(ctx::fail);
  }

  void deleteDocument(RoutingContext ctx) {
    UUID id = Requests.documentId(ctx.pathParam("id"));
    documentStore.delete(ApiRoutes.tenant(ctx), id)
        .compose(deleted -> deleted ? Future.succeededFuture() : Future.failedFuture(missing(id)))
        .onSuccess(v -> ctx.response().setStatusCode(204).end())
        .onFailure(ctx::fail);
  }

  void items(RoutingContext ctx) {
    UUID id = Requests.documentId(ctx.pathParam("id"));
    documentStore.items(ApiRoutes.tenant(ctx), id)
        .map(found -> found.orElseThrow(() -> missing(id)))
        .onSuccess(items -> ctx.response()
            .putHeader(HttpHeaders.CONTENT_TYPE, "application/x-ndjson")
            .end(DocumentsFs.itemsJsonl(items)))
        .onFailure(ctx::fail);
  }

  void toc(RoutingContext ctx) {
    UUID id = Requests.documentId(ctx.pathParam("id"));
    documentStore.toc(ApiRoutes.tenant(ctx), id)
        .map(found -> found.orElseThrow(() -> missing(id)))
        .onSuccess(toc -> ApiRoutes.replyJson(ctx, 200, toc))
        .onFailure(ctx::fail);
  }

  void content(RoutingContext ctx) {
    UUID id = Requests.documentId(ctx.pathParam("id"));
    documentStore.content(ApiRoutes.tenant(ctx), id)
        .map(found -> found.orElseThrow(() -> missing(id)))
        .onSuccess(text -> ctx.response().putHeader(HttpHeaders.CONTENT_TYPE, "text/plain; charset=utf-8").end(text))
        .onFailure(ctx::fail);
  }

  /** A chunk a citation or a hit names, with the range of items it came from. */
  void chunk(RoutingContext ctx) {
    UUID id = Requests.documentId(ctx.pathParam("id"));
    UUID chunk = Requests.uuid("chunk id", ctx.pathParam("chunk"));
    documentStore.chunk(ApiRoutes.tenant(ctx), id, chunk)
        .map(found -> found.orElseThrow(() -> ApiError.notFound("no chunk with id " + chunk + " in document " + id)))
        .onSuccess(body -> ApiRoutes.replyJson(ctx, 200, body))
        .onFailure(ctx::fail);
  }

  static ApiError missing(UUID id) {
    return ApiError.notFound("no document with id " + id);
  }

}
