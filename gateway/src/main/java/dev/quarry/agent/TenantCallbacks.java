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
import java.util.function.Supplier;

/**
 * The sandbox's callbacks for one analysis, bound to its tenant and scope: search and the document
 * list only ever see those documents, whatever the code asks for.
 */
final class TenantCallbacks implements Callbacks {
  private final UUID tenantId;
  private final Scope scope;
  private final SearchService search;
  private final DocumentStore documents;
  private final ModelClient model;
  private final Supplier<Instant> deadline;
  private final int maxSearchLimit;
  private final int maxQueryChars;

  TenantCallbacks(UUID tenantId, Scope scope, SearchService search, DocumentStore documents, ModelClient model,
      Supplier<Instant> deadline, int maxSearchLimit, int maxQueryChars) {
    this.tenantId = tenantId;
    this.scope = scope;
    this.search = search;
    this.documents = documents;
    this.model = model;
    this.deadline = deadline;
    this.maxSearchLimit = maxSearchLimit;
    this.maxQueryChars = maxQueryChars;
  }

  @Override
  public Future<JsonArray> search(String query, int limit) {
    if (query == null || query.isBlank()) {
      return Future.failedFuture(CallbackFailure.valueError("search() needs a non-empty query"));
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
    if (prompt == null || prompt.isBlank()) {
      return Future.failedFuture(CallbackFailure.valueError("llm() needs a non-empty prompt"));
    }
    Promise<ModelClient.Completion> promise = Promise.promise();
    // The client blocks: a virtual thread of its own keeps it off the event loop.
    Thread.ofVirtual().name("llm-callback").start(() -> {
      try {
        promise.complete(model.complete(prompt, deadline.get()));
      } catch (ModelFailure e) {
        promise.fail(CallbackFailure.runtimeError("llm() failed: " + e.type() + ": " + e.getMessage()));
      } catch (RuntimeException e) {
        promise.fail(CallbackFailure.runtimeError("llm() failed"));
      }
    });
    return promise.future();
  }
}
