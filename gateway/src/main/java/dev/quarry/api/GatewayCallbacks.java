package dev.quarry.api;

import dev.quarry.ops.Config;
import dev.quarry.sandbox.CallbackFailure;
import dev.quarry.sandbox.Callbacks;
import dev.quarry.sandbox.Scope;
import dev.quarry.search.SearchRequest;
import dev.quarry.search.SearchService;
import dev.quarry.store.DocumentStore;
import dev.quarry.store.DocumentSummary;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;

/**
 * The gateway's answers to a sandbox's callbacks, for one tenant and scope fixed at construction:
 * search returns hits exactly as POST /v1/search does, list_documents the documents in scope.
 * Bad arguments fail as ValueError with the API's own message.
 */
public final class GatewayCallbacks implements Callbacks {
  private final SearchService search;
  private final DocumentStore documents;
  private final Config config;
  private final UUID tenantId;
  private final Scope scope;
  private final Function<String, Future<String>> llm;

  /**
   * @param llm one plain completion per prompt; null when no model endpoint is configured
   */
  public GatewayCallbacks(SearchService search, DocumentStore documents, Config config, UUID tenantId,
      Scope scope, Function<String, Future<String>> llm) {
    this.search = search;
    this.documents = documents;
    this.config = config;
    this.tenantId = tenantId;
    this.scope = scope;
    this.llm = llm;
  }

  @Override
  public Future<JsonArray> search(String query, int limit) {
    SearchRequest request;
    try {
      SearchRequest checked = Requests.search(new JsonObject().put("query", query).put("limit", limit), config);
      request = new SearchRequest(checked.query(), checked.limit(),
          scope.isAll() ? Set.of() : scope.documentIds());
    } catch (ApiError e) {
      return Future.failedFuture(CallbackFailure.valueError(
          e.getMessage().replace("field 'query'", "query").replace("field 'limit'", "limit")));
    }
    return search.search(tenantId, request).map(hits -> {
      JsonArray out = new JsonArray();
      hits.forEach(h -> out.add(h.toJson()));
      return out;
    });
  }

  @Override
  public Future<JsonArray> listDocuments() {
    return documents.list(tenantId).map(all -> {
      JsonArray out = new JsonArray();
      for (DocumentSummary d : all) {
        if (scope.includes(d.id())) {
          out.add(d.metadataJson());
        }
      }
      return out;
    });
  }

  @Override
  public Future<String> llm(String prompt) {
    if (llm == null) {
      return Future.failedFuture(CallbackFailure.runtimeError(
          "llm() is unavailable: no model endpoint is configured for this gateway"));
    }
    try {
      return llm.apply(prompt);
    } catch (RuntimeException e) {
      return Future.failedFuture(e);
    }
  }
}
