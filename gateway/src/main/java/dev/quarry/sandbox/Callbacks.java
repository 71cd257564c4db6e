package dev.quarry.sandbox;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;

/**
 * What a sandbox's code can call back into the gateway for. One instance serves one session, with
 * the tenant and scope fixed when the session opened: nothing the sandbox sends can widen them.
 *
 * <p>A future failed with a {@link CallbackFailure} reaches the code as that exception type; any
 * other failure reaches it as a RuntimeError with a safe message (never a Java stack trace).
 */
public interface Callbacks {

  /** search(query, limit): the hits as POST /v1/search returns them. */
  Future<JsonArray> search(String query, int limit);

  /** list_documents(): {id, title, uri, created_at} per document in scope. */
  Future<JsonArray> listDocuments();

  /** llm(prompt): the model's answer. */
  Future<String> llm(String prompt);
}
