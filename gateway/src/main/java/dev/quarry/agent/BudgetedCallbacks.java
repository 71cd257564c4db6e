package dev.quarry.agent;

import dev.quarry.callbacks.TenantCallbacks;
import dev.quarry.sandbox.CallbackFailure;
import dev.quarry.sandbox.Callbacks;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Counts an analysis' search and llm calls against its budget (failing the call over it with a
 * LimitExceeded the code sees), counts llm tokens, and notes the search hits for citations.
 */
final class BudgetedCallbacks implements Callbacks {
  private final TenantCallbacks delegate;
  private final Budgets budgets;
  private final Citations citations;
  private final Consumer<Usage> tokens;
  private final AtomicInteger searches = new AtomicInteger();
  private final AtomicInteger llms = new AtomicInteger();

  BudgetedCallbacks(TenantCallbacks delegate, Budgets budgets, Citations citations, Consumer<Usage> tokens) {
    this.delegate = delegate;
    this.budgets = budgets;
    this.citations = citations;
    this.tokens = tokens;
  }

  @Override
  public Future<JsonArray> search(String query, int limit) {
    if (searches.incrementAndGet() > budgets.searchCalls()) {
      searches.decrementAndGet();
      return Future.failedFuture(new CallbackFailure("LimitExceeded",
          "this analysis has used all of its " + budgets.searchCalls() + " search() calls"));
    }
    return delegate.search(query, limit).onSuccess(citations::searchHits);
  }

  @Override
  public Future<JsonArray> listDocuments() {
    return delegate.listDocuments();
  }

  @Override
  public Future<String> llm(String prompt) {
    if (llms.incrementAndGet() > budgets.llmCalls()) {
      llms.decrementAndGet();
      return Future.failedFuture(new CallbackFailure("LimitExceeded",
          "this analysis has used all of its " + budgets.llmCalls() + " llm() calls"));
    }
    return delegate.completion(prompt).map(c -> {
      tokens.accept(new Usage(c.promptTokens(), c.completionTokens()));
      return c.text();
    });
  }

  int searchCalls() {
    return searches.get();
  }

  int llmCalls() {
    return llms.get();
  }
}
