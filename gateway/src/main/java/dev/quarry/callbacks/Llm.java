package dev.quarry.callbacks;

import io.vertx.core.Future;
import java.time.Instant;

/**
 * The model behind a sandbox's {@code llm(prompt)}: one completion of one prompt. The gateway
 * gives the agent's model client here (its adapter lives with the client); this package only needs
 * the text and the tokens it cost.
 */
@FunctionalInterface
public interface Llm {
  /**
   * One completion, done by {@code deadline} (the model's own request timeout bounds it too). Fails
   * with a {@link dev.quarry.sandbox.CallbackFailure} worded for the code when the model refuses or
   * fails; any other failure reaches the code as a bare "llm() failed".
   */
  Future<Reply> complete(String prompt, Instant deadline);

  /**
   * As {@link #complete(String, Instant)}, the completion asked to stay within
   * {@code maxCompletionTokens} (the request's {@code max_completion_tokens}; 0 asks for no bound).
   * A model that cannot bound its reply ignores it.
   */
  default Future<Reply> complete(String prompt, Instant deadline, long maxCompletionTokens) {
    return complete(prompt, deadline);
  }

  /** The model's text and the tokens the endpoint reported for it. */
  record Reply(String text, long promptTokens, long completionTokens) {
    public long total() {
      return promptTokens + completionTokens;
    }
  }
}
