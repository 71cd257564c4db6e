package dev.quarry.agent;

import dev.quarry.sandbox.Scope;
import java.util.List;
import java.util.UUID;

/**
 * A question to answer over the tenant's documents.
 *
 * @param scope   the documents it may see (all of them when empty)
 * @param preload documents given to the code as the {@code documents} variable
 */
public record AnalysisRequest(String question, Scope scope, List<UUID> preload, Budgets budgets) {
  public AnalysisRequest {
    preload = List.copyOf(preload);
  }
}
