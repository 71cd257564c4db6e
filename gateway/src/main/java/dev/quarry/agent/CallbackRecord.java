package dev.quarry.agent;

import dev.quarry.sandbox.CallbackFailure;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * What one callback of a cell answered, as stored ({@code analysis_callbacks}, V21): which call it
 * was (its kind and a digest of its whole arguments) and its outcome as the sandbox got it, a value
 * or a failure, with an llm() call's tokens. A rebuild answers the same call from it rather than
 * calling (and paying) again.
 *
 * @param outcome {@code {"value": ...}}, or {@code {"error": {"type", "message"}}} for a failure
 *                meant for the code, or {@code {"error": {}}} for one the code saw as a bare failure
 * @param usage   an llm() call's {@code {"prompt_tokens", "completion_tokens"}}; null otherwise
 */
record CallbackRecord(int step, int ordinal, String kind, String digest, JsonObject outcome, JsonObject usage) {

  static final String SEARCH = "search";
  static final String LIST_DOCUMENTS = "list_documents";
  static final String LLM = "llm";

  /** The digest that tells one call from another: its kind and whole arguments, hashed. */
  static String digest(String kind, String arguments) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update(kind.getBytes(StandardCharsets.UTF_8));
      sha.update((byte) 0);
      sha.update((arguments == null ? "" : arguments).getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(sha.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every Java runtime", e);
    }
  }

  static String searchArguments(String query, int limit) {
    return limit + "\n" + query;
  }

  /** The stored outcome of a call that answered {@code value}. */
  static JsonObject value(Object value) {
    return new JsonObject().put("value", value);
  }

  /** The stored outcome of a call that failed: the failure meant for the code as it was, any other as bare. */
  static JsonObject failure(Throwable e) {
    JsonObject error = new JsonObject();
    if (e instanceof CallbackFailure f) {
      error.put("type", f.type()).put("message", f.message());
    }
    return new JsonObject().put("error", error);
  }

  /** The failure to answer again: the same one meant for the code, or a bare one the session words as it did. */
  Throwable failure() {
    JsonObject error = outcome.getJsonObject("error");
    if (error == null) {
      return null;
    }
    String type = error.getString("type");
    return type == null ? new IllegalStateException("a callback that failed (recorded)")
        : new CallbackFailure(type, error.getString("message", ""));
  }
}
