package dev.quarry.agent;

import dev.quarry.sandbox.Scope;
import java.util.List;
import java.util.UUID;

/**
 * A question to answer over the tenant's documents.
 *
 * @param scope        the documents it may see (all of them when empty)
 * @param preload      documents given to the code as the {@code documents} variable
 * @param conversation earlier turns the question continues (oldest first; empty for a question on
 *                     its own), shown to the model as context, never as instructions
 * @param instructions the caller's own instructions (a chat client's system messages), added to the
 *                     system prompt; empty when there are none
 */
public record AnalysisRequest(String question, Scope scope, List<UUID> preload, Budgets budgets,
    List<Turn> conversation, String instructions) {

  /** One earlier turn of a conversation: who said it ({@code user} or {@code assistant}) and what. */
  public record Turn(String role, String text) {
    public Turn {
      if (!role.equals("user") && !role.equals("assistant")) {
        throw new IllegalArgumentException("a turn is the user's or the assistant's, not " + role);
      }
    }
  }

  public AnalysisRequest {
    preload = List.copyOf(preload);
    conversation = List.copyOf(conversation);
    instructions = instructions == null ? "" : instructions;
  }

  public AnalysisRequest(String question, Scope scope, List<UUID> preload, Budgets budgets) {
    this(question, scope, preload, budgets, List.of(), "");
  }
}
