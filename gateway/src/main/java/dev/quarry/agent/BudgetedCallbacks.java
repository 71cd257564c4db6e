package dev.quarry.agent;

import dev.quarry.callbacks.Llm;
import dev.quarry.sandbox.CallbackFailure;
import dev.quarry.sandbox.CallbackType;
import dev.quarry.sandbox.Callbacks;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Counts an analysis' search, list_documents and llm calls against its budgets (failing the call
 * over one with a LimitExceeded the code sees, at once and at no further cost), keeps llm() within
 * what is left of the analysis' tokens, counts their tokens, and notes the search hits for citations.
 */
final class BudgetedCallbacks implements Callbacks {
  /** Characters per token when a prompt's tokens are estimated before it is sent (English prose). */
  static final int CHARS_PER_TOKEN = 4;

  private final CallbackSource delegate;
  private volatile Budgets budgets;
  private final Citations citations;
  private final Consumer<Usage> tokens;
  /** The analysis' tokens so far (model turns and llm() calls that returned). */
  private final LongSupplier tokensUsed;
  private final AtomicInteger searches = new AtomicInteger();
  private final AtomicInteger llms = new AtomicInteger();
  private final AtomicInteger lists = new AtomicInteger();
  /**
   * What llm() calls in flight may still cost (their estimated prompts and their replies' bounds),
   * which the next call counts as spent.
   */
  private final AtomicLong reserved = new AtomicLong();

  BudgetedCallbacks(CallbackSource delegate, Budgets budgets, Citations citations, Consumer<Usage> tokens,
      LongSupplier tokensUsed) {
    this.delegate = delegate;
    this.budgets = budgets;
    this.citations = citations;
    this.tokens = tokens;
    this.tokensUsed = tokensUsed;
  }

  @Override
  public Future<JsonArray> search(String query, int limit) {
    CallbackFailure over = spend(searches, budgets.searchCalls(), "search", "search_calls");
    return over != null ? Future.failedFuture(over) : delegate.search(query, limit).onSuccess(citations::searchHits);
  }

  @Override
  public Future<JsonArray> listDocuments() {
    CallbackFailure over = spend(lists, budgets.listDocumentsCalls(), "list_documents", "list_documents_calls");
    return over != null ? Future.failedFuture(over) : delegate.listDocuments();
  }

  /**
   * One llm() call, refused when the analysis' {@code tokens} budget is spent or when the prompt
   * alone (estimated at {@value #CHARS_PER_TOKEN} characters a token) would take what is left;
   * otherwise asked with {@code max_completion_tokens} of half of what is left after the prompt, and
   * that half is reserved with the prompt while the call runs. Calls made at once (a cell's
   * {@code asyncio.gather}) therefore each see what the others have not reserved, and together stay
   * within the budget; a lone call's reply may still take half of what is left.
   */
  @Override
  public Future<String> llm(String prompt) {
    CallbackFailure over = spend(llms, budgets.llmCalls(), "llm", "llm_calls");
    if (over != null) {
      return Future.failedFuture(over);
    }
    long estimate = prompt == null ? 0 : (prompt.length() + CHARS_PER_TOKEN - 1) / CHARS_PER_TOKEN;
    long used;
    long left;
    long grant;
    long reservation;
    // What is left is read and this call's share reserved at once, and a finished call's tokens are
    // counted and its reservation released at once (below), under one lock: otherwise two calls at
    // once could both be granted from the same tokens, or one could see a finished call's tokens in
    // neither place (a ForgedLlmCallsTest run spent 5,002 of 5,000).
    synchronized (reserved) {
      used = tokensUsed.getAsLong();
      left = budgets.tokens() - used - reserved.get();
      if (left <= 0 || estimate >= left) {
        grant = reservation = 0;
      } else {
        grant = Math.max(1, (left - estimate) / 2);
        reservation = estimate + grant;
        reserved.addAndGet(reservation);
      }
    }
    if (reservation == 0) {
      llms.decrementAndGet();
      return Future.failedFuture(new CallbackFailure("LimitExceeded", left <= 0
          ? "this analysis has used its tokens: " + used + " of its " + budgets.tokens() + " (budgets.tokens)"
              + (reserved.get() > 0 ? ", with more in llm() calls still running" : "")
          : "llm(): the prompt of about " + estimate + " tokens (" + prompt.length() + " characters) does not fit"
              + " in the " + left + " tokens left of this analysis' " + budgets.tokens() + " (budgets.tokens)"));
    }
    return delegate.completion(prompt, grant)
        .onComplete(ar -> {
          synchronized (reserved) {
            if (ar.succeeded()) {
              tokens.accept(new Usage(ar.result().promptTokens(), ar.result().completionTokens()));
            }
            reserved.addAndGet(-reservation);
          }
        })
        .map(Llm.Reply::text);
  }

  /**
   * The budgets of the next question (a follow-up, or a followed-up analysis being rebuilt): its
   * calls are counted afresh against them.
   */
  void budgets(Budgets next) {
    this.budgets = next;
    searches.set(0);
    llms.set(0);
    lists.set(0);
  }

  /** Counts one call of a budget, or says why it is refused (and then does not count it). */
  private static CallbackFailure spend(AtomicInteger calls, int budget, String name, String field) {
    if (calls.incrementAndGet() <= budget) {
      return null;
    }
    calls.decrementAndGet();
    return new CallbackFailure("LimitExceeded", "this analysis has used all of its " + budget + " " + name
        + "() calls (budgets." + field + ")");
  }

  /** Whether a call of this kind would be refused for its call budget now (it stays so). */
  boolean spent(CallbackType type) {
    return switch (type) {
      case SEARCH -> searches.get() >= budgets.searchCalls();
      case LLM -> llms.get() >= budgets.llmCalls();
      case LIST_DOCUMENTS -> lists.get() >= budgets.listDocumentsCalls();
    };
  }

  int searchCalls() {
    return searches.get();
  }

  int llmCalls() {
    return llms.get();
  }

  int listDocumentsCalls() {
    return lists.get();
  }
}
