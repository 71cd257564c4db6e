package dev.quarry.api;

import dev.quarry.callbacks.CallbackService;
import dev.quarry.config.Config;
import dev.quarry.sandbox.SandboxService;
import dev.quarry.search.SearchService;
import dev.quarry.store.DocumentStore;
import io.vertx.ext.web.RoutingContext;
import java.util.UUID;

/**
 * Search ({@code POST /v1/search}) and code run against it in a sandbox ({@code POST
 * /v1/executions}, whose callbacks are the ones analyses get).
 *
 * @param sandboxes null when this gateway runs no sandboxes (POST /v1/executions answers 503)
 */
record SearchRoutes(Config config, SearchService searchService, DocumentStore documentStore,
    SandboxService sandboxes, CallbackService callbacks) {

  void search(RoutingContext ctx) {
    UUID tenant = ApiRoutes.tenant(ctx);
    searchService.search(tenant, Requests.search(Requests.jsonObject(ctx.body().buffer()), config))
        .onSuccess(hits -> ApiRoutes.replyJson(ctx, 200, WireFormat.results(hits)))
        .onFailure(ctx::fail);
  }

  void execute(RoutingContext ctx) {
    UUID tenant = ApiRoutes.tenant(ctx);
    new Executions(sandboxes, documentStore, (scope, deadline) -> callbacks.forTenant(tenant, scope, deadline), config.sseHeartbeat())
        .handle(ctx, tenant);
  }
}
