package dev.quarry.callbacks;

import dev.quarry.sandbox.CallbackFailure;
import dev.quarry.sandbox.Callbacks;
import dev.quarry.sandbox.Scope;
import dev.quarry.search.QueryRules;
import dev.quarry.search.SearchRequest;
import dev.quarry.search.SearchService;
import dev.quarry.store.DocumentStore;
import dev.quarry.tenancy.QuotaExceeded;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import java.time.Instant;
import java.util.Set;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * What a sandbox's code may call, bound to one tenant and scope: search and the document list
 * only ever see those documents, whatever the code asks for, and every llm() is asked of and
 * counted in the tenant's daily tokens. The one implementation behind executions, analyses and
 * replays; an analysis puts its budgets on top (agent's {@code BudgetedCallbacks}). Made by
 * {@link CallbackService}.
 *
 * @param llm      the model; null when no model endpoint is configured (llm() then fails saying so)
 * @param deadline when the work the code runs in must be done; each llm() ends by then
 */
public record TenantCallbacks(UUID tenantId, Scope scope, SearchService search, DocumentStore documents,
    QueryRules rules, Llm llm, TokenAccount tokens, CallbackTurns turns, Supplier<Instant> deadline)
    implements Callbacks {

  @Override
  public Future<JsonArray> search(String query, int limit) {
    var problem = rules.check(query, limit);
    if (problem.isPresent()) {
      return Future.failedFuture(CallbackFailure.valueError("search(): " + problem.get().message()));
    }
    Set<UUID> ids = scope.isAll() ? Set.of() : scope.documentIds();
    return turns.take(tenantId, deadline.get()).compose(turn -> search.search(tenantId,
        new SearchRequest(query, limit, ids))).map(hits -> {
      JsonArray out = new JsonArray();
      hits.forEach(h -> out.add(h.toJson()));
      return out;
    });
  }

  @Override
  public Future<JsonArray> listDocuments() {
    return turns.take(tenantId, deadline.get()).compose(turn -> documents.list(tenantId)).map(all -> {
      JsonArray out = new JsonArray();
      all.stream().filter(d -> scope.includes(d.id())).forEach(d -> out.add(d.metadataJson()));
      return out;
    });
  }

  @Override
  public Future<String> llm(String prompt) {
    return completion(prompt).map(Llm.Reply::text);
  }

  /**
   * The completion with its token usage, which an analysis' budget counts too. Asked of the
   * tenant's daily tokens first; its tokens are counted before it is answered, so that the next
   * call sees them.
   */
  public Future<Llm.Reply> completion(String prompt) {
    return completion(prompt, 0);
  }

  /** As {@link #completion(String)}, the reply bounded to {@code maxCompletionTokens} (0: no bound). */
  public Future<Llm.Reply> completion(String prompt, long maxCompletionTokens) {
    if (llm == null) {
      return Future.failedFuture(CallbackFailure.runtimeError(
          "llm() is unavailable: no model endpoint is configured for this gateway"));
    }
    if (prompt == null || prompt.isBlank()) {
      return Future.failedFuture(CallbackFailure.valueError("llm() needs a non-empty prompt"));
    }
    Future<Llm.Reply> reply;
    try {
      reply = turns.take(tenantId, deadline.get())
          .compose(turn -> tokens.allowed(tenantId))
          .compose(left -> llm.complete(prompt, deadline.get(), maxCompletionTokens))
          .compose(r -> tokens.used(tenantId, r.total()).map(r));
    } catch (RuntimeException e) {
      reply = Future.failedFuture(e);
    }
    // What the code sees: a spent quota as LimitExceeded, the model's failure as worded, nothing internal.
    return reply.recover(e -> Future.failedFuture(switch (e) {
      case CallbackFailure f -> f;
      case QuotaExceeded q -> new CallbackFailure("LimitExceeded", q.getMessage());
      default -> CallbackFailure.runtimeError("llm() failed");
    }));
  }
}
