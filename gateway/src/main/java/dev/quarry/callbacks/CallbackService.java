package dev.quarry.callbacks;

import dev.quarry.sandbox.Scope;
import dev.quarry.search.QueryRules;
import dev.quarry.search.SearchService;
import dev.quarry.store.DocumentStore;
import java.time.Instant;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * Makes the callbacks of each sandbox the gateway opens: one search, one document store, one
 * model and one token account, given to executions ({@code POST /v1/executions}), analyses and
 * replays alike. Its {@code tokens} are the tenants' daily model tokens, which an analysis' own
 * model turns are counted in too; its {@code turns} the tenants' callbacks per minute.
 *
 * @param llm the model behind llm(); null when none is configured
 */
public record CallbackService(SearchService search, DocumentStore documents, QueryRules rules, Llm llm,
    TokenAccount tokens, CallbackTurns turns) {

  /**
   * For work with a deadline of its own (an analysis, a replay, an execution's cell): each llm()
   * ends by it (and within the model's own request timeout).
   */
  public TenantCallbacks forTenant(UUID tenantId, Scope scope, Supplier<Instant> deadline) {
    return new TenantCallbacks(tenantId, scope, search, documents, rules, llm, tokens, turns, deadline);
  }

}
