package dev.quarry.agent;

import dev.quarry.sandbox.CallbackFailure;
import dev.quarry.sandbox.Callbacks;
import dev.quarry.sandbox.Scope;
import dev.quarry.search.SearchRequest;
import dev.quarry.search.SearchService;
import dev.quarry.store.DocumentStore;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonArray;
import java.time.Instant;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The gateway's answers to a sandbox's callbacks, bound to one tenant and scope: search and the
 * document list only ever see those documents, whatever the code asks for. The one implementation
 * behind both executions ({@code POST /v1/executions}) and analyses, which put their budgets on top
 * ({@link BudgetedCallbacks}).
 *
 * <p>It lives with the agent because llm() is the model client's; the API already depends on this
 * package, so the sandbox package stays free of search, store and model.
 */
public final class TenantCallbacks implements Callbacks {
  private final UUID tenantId;
  private final Scope scope;
  private final SearchService search;
  private final DocumentStore documents;
  private final Function<String, Future<ModelClient.Completion>> model;
  private final int maxSearchLimit;
  private final int maxQueryChars;

  /**
   * @param model one completion per prompt, with its token usage; null when no model endpoint is
   *              configured (llm() then fails saying so)
   */
  public TenantCallbacks(UUID tenantId, Scope scope, SearchService search, DocumentStore documents,
      int maxSearchLimit, int maxQueryChars, Function<String, Future<ModelClient.Completion>> model) {
    this.tenantId = tenantId;
    this.scope = scope;
    this.search = search;
    this.documents = documents;
    this.model = model;
    this.maxSearchLimit = maxSearchLimit;
    this.maxQueryChars = maxQueryChars;
  }

  /**
   * For an analysis or a replay: llm() asks the tenant's daily tokens first ({@code meter}), then
   * calls the model directly, within the deadline.
   */
  TenantCallbacks(UUID tenantId, Scope scope, SearchService search, DocumentStore documents, ModelClient model,
      Supplier<Instant> deadline, int maxSearchLimit, int maxQueryChars, AnalysisService.TokenMeter meter) {
    this(tenantId, scope, search, documents, maxSearchLimit, maxQueryChars,
        prompt -> meter.allowed(tenantId).compose(left -> until(model, prompt, deadline)));
  }

  @Override
  public Future<JsonArray> search(String query, int limit) {
    if (query == null || query.isBlank()) {
      return Future.failedFuture(CallbackFailure.valueError("search() needs a non-empty query"));
    }
    if (query.indexOf('\0') >= 0) {
      return Future.failedFuture(CallbackFailure.valueError("search() query contains a NUL character (\\x00)"));
    }
    if (query.length() > maxQueryChars) {
      return Future.failedFuture(CallbackFailure.valueError("search() query has " + query.length()
          + " characters; the limit is " + maxQueryChars));
    }
    if (limit < 1 || limit > maxSearchLimit) {
      return Future.failedFuture(CallbackFailure.valueError("search() limit must be between 1 and "
          + maxSearchLimit + ", got " + limit));
    }
    Set<UUID> ids = scope.isAll() ? Set.of() : scope.documentIds();
    return search.search(tenantId, new SearchRequest(query, limit, ids)).map(hits -> {
      JsonArray out = new JsonArray();
      hits.forEach(h -> out.add(h.toJson()));
      return out;
    });
  }

  @Override
  public Future<JsonArray> listDocuments() {
    return documents.list(tenantId).map(all -> {
      JsonArray out = new JsonArray();
      all.stream().filter(d -> scope.includes(d.id())).forEach(d -> out.add(d.metadataJson()));
      return out;
    });
  }

  @Override
  public Future<String> llm(String prompt) {
    return completion(prompt).map(ModelClient.Completion::text);
  }

  /** The completion with its token usage, which the budget keeper counts. */
  Future<ModelClient.Completion> completion(String prompt) {
    if (model == null) {
      return Future.failedFuture(CallbackFailure.runtimeError(
          "llm() is unavailable: no model endpoint is configured for this gateway"));
    }
    if (prompt == null || prompt.isBlank()) {
      return Future.failedFuture(CallbackFailure.valueError("llm() needs a non-empty prompt"));
    }
    Future<ModelClient.Completion> reply;
    try {
      reply = model.apply(prompt);
    } catch (RuntimeException e) {
      reply = Future.failedFuture(e);
    }
    // What the code sees: a quota's LimitExceeded as is, the model's failure by type, nothing internal.
    return reply.recover(e -> Future.failedFuture(switch (e) {
      case CallbackFailure f -> f;
      case dev.quarry.tenancy.QuotaExceeded q -> new CallbackFailure("LimitExceeded", q.getMessage());
      case ModelFailure f -> CallbackFailure.runtimeError("llm() failed: " + f.type() + ": " + f.getMessage());
      default -> CallbackFailure.runtimeError("llm() failed");
    }));
  }

  /** The model client blocks: a virtual thread of its own keeps it off the event loop. */
  private static Future<ModelClient.Completion> until(ModelClient model, String prompt, Supplier<Instant> deadline) {
    Promise<ModelClient.Completion> promise = Promise.promise();
    Thread.ofVirtual().name("llm-callback").start(() -> {
      try {
        promise.complete(model.complete(prompt, deadline.get()));
      } catch (RuntimeException e) {
        promise.fail(e);
      }
    });
    return promise.future();
  }
}
