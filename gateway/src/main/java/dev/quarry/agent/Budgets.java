package dev.quarry.agent;

import io.vertx.core.json.JsonObject;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one analysis may spend. Each has a default and a maximum in {@link AgentSettings}; a request
 * may ask for less or more, up to the maximum.
 */
public record Budgets(int modelTurns, long wallTimeMs, long tokens, int executions, int searchCalls,
    int llmCalls, int listDocumentsCalls) {

  public static final Budgets DEFAULTS = new Budgets(20, 300_000, 200_000, 20, 50, 20, 20);
  public static final Budgets MAXIMUMS = new Budgets(60, 1_800_000, 2_000_000, 100, 500, 200, 500);

  /** The wire names, which are also the names a request's {@code budgets} object uses. */
  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    asMap().forEach(json::put);
    return json;
  }

  Map<String, Long> asMap() {
    Map<String, Long> m = new LinkedHashMap<>();
    m.put("model_turns", (long) modelTurns);
    m.put("wall_time_ms", wallTimeMs);
    m.put("tokens", tokens);
    m.put("execute_code_calls", (long) executions);
    m.put("search_calls", (long) searchCalls);
    m.put("llm_calls", (long) llmCalls);
    m.put("list_documents_calls", (long) listDocumentsCalls);
    return m;
  }

  /** Budgets as {@link #toJson} wrote them; one recorded before list_documents had a budget gets the default. */
  public static Budgets fromJson(JsonObject json) {
    return new Budgets(json.getInteger("model_turns"), json.getLong("wall_time_ms"), json.getLong("tokens"),
        json.getInteger("execute_code_calls"), json.getInteger("search_calls"), json.getInteger("llm_calls"),
        json.getInteger("list_documents_calls", DEFAULTS.listDocumentsCalls));
  }

  /**
   * These defaults overridden by the fields of a request's {@code budgets} object, each checked
   * against the maximum. Fails with an {@link IllegalArgumentException} naming the field.
   */
  public Budgets overriddenBy(JsonObject requested, Budgets maximums) {
    if (requested == null) {
      return this;
    }
    Map<String, Long> values = asMap();
    Map<String, Long> max = maximums.asMap();
    for (String field : requested.fieldNames()) {
      if (!values.containsKey(field)) {
        throw new IllegalArgumentException("budgets." + field + " is not a budget; the budgets are "
            + String.join(", ", values.keySet()));
      }
      Object raw = requested.getValue(field);
      if (!(raw instanceof Integer || raw instanceof Long)) {
        throw new IllegalArgumentException("budgets." + field + " must be an integer, got " + raw);
      }
      long v = ((Number) raw).longValue();
      if (v < 1 || v > max.get(field)) {
        throw new IllegalArgumentException("budgets." + field + " is " + v + "; it must be between 1 and "
            + max.get(field));
      }
      values.put(field, v);
    }
    return new Budgets(values.get("model_turns").intValue(), values.get("wall_time_ms"), values.get("tokens"),
        values.get("execute_code_calls").intValue(), values.get("search_calls").intValue(),
        values.get("llm_calls").intValue(), values.get("list_documents_calls").intValue());
  }
}
