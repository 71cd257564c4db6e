package dev.quarry.agent;

import dev.quarry.sandbox.CallbackFailure;
import dev.quarry.sandbox.Callbacks;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The callback budget of an execution ({@code POST /v1/executions}): search, list_documents and
 * llm together, at most {@code limit} calls; each one past it fails at once with a LimitExceeded
 * the code sees, and costs the gateway nothing more. Analyses budget their calls by kind instead
 * ({@link BudgetedCallbacks}).
 */
public final class CallbackBudget implements Callbacks {
  private final Callbacks delegate;
  private final int limit;
  private final AtomicInteger calls = new AtomicInteger();

  public CallbackBudget(Callbacks delegate, int limit) {
    this.delegate = delegate;
    this.limit = limit;
  }

  @Override
  public Future<JsonArray> search(String query, int limit) {
    CallbackFailure over = spend();
    return over != null ? Future.failedFuture(over) : delegate.search(query, limit);
  }

  @Override
  public Future<JsonArray> listDocuments() {
    CallbackFailure over = spend();
    return over != null ? Future.failedFuture(over) : delegate.listDocuments();
  }

  @Override
  public Future<String> llm(String prompt) {
    CallbackFailure over = spend();
    return over != null ? Future.failedFuture(over) : delegate.llm(prompt);
  }

  private CallbackFailure spend() {
    if (calls.incrementAndGet() <= limit) {
      return null;
    }
    calls.decrementAndGet();
    return new CallbackFailure("LimitExceeded", "this execution has used all of its " + limit
        + " callbacks (search, list_documents and llm together; limits.callbacks)");
  }

  /** Calls made so far within the budget. */
  public int calls() {
    return calls.get();
  }
}
