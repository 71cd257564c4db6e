package dev.quarry.agent;

import dev.quarry.callbacks.Llm;
import dev.quarry.callbacks.TenantCallbacks;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;

/**
 * Where an analysis' callbacks are answered from, under its budgets ({@link BudgetedCallbacks}): the
 * tenant's search, documents and model ({@link #of}), or the analysis' own record of them
 * ({@link RecordedCallbacks}).
 */
interface CallbackSource {
  Future<JsonArray> search(String query, int limit);

  Future<JsonArray> listDocuments();

  /** An llm() completion bounded to {@code maxCompletionTokens}, with the tokens it cost. */
  Future<Llm.Reply> completion(String prompt, long maxCompletionTokens);

  static CallbackSource of(TenantCallbacks tenant) {
    return new CallbackSource() {
      @Override
      public Future<JsonArray> search(String query, int limit) {
        return tenant.search(query, limit);
      }

      @Override
      public Future<JsonArray> listDocuments() {
        return tenant.listDocuments();
      }

      @Override
      public Future<Llm.Reply> completion(String prompt, long maxCompletionTokens) {
        return tenant.completion(prompt, maxCompletionTokens);
      }
    };
  }
}
