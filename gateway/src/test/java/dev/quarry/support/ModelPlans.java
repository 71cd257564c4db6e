package dev.quarry.support;

import dev.quarry.agent.ScriptedModelServer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A scripted model for many analyses at once (give {@link #reply} to
 * {@link ScriptedModelServer#otherwise}): each analysis' question names a plan by its token, and
 * the model runs the plan's cells in order (counted by the tool results after that question, so a
 * follow-up's own question starts its own plan), then answers quoting the last cell's output. A
 * hold keeps one turn of a plan unanswered, once: the replica waiting for it is killed or drained,
 * and the turn is asked again where the analysis goes on.
 */
public final class ModelPlans {
  private final Map<String, List<String>> cells = new ConcurrentHashMap<>();
  private final Map<String, ScriptedModelServer.Held> holds = new ConcurrentHashMap<>();

  /** A new plan of these cells; put its token in a question. */
  public String plan(List<String> steps) {
    String token = "plan-" + UUID.randomUUID().toString().substring(0, 8);
    cells.put(token, List.copyOf(steps));
    return token;
  }

  /** Holds the plan's turn after {@code turn} tool results, once; its {@code asked} completes when it is asked. */
  public ScriptedModelServer.Held hold(String token, int turn) {
    ScriptedModelServer.Held held = new ScriptedModelServer.Held();
    holds.put(token + "#" + turn, held);
    return held;
  }

  /** The answer an uninterrupted run of the plan ends with, given its last cell's output. */
  public static String answer(String lastOutput) {
    return "the output was " + lastOutput.strip();
  }

  public ScriptedModelServer.Reply reply(JsonObject request) {
    JsonArray messages = request.getJsonArray("messages");
    for (int i = messages.size() - 1; i >= 0; i--) {
      JsonObject m = messages.getJsonObject(i);
      if (!"user".equals(m.getString("role"))) {
        continue;
      }
      String text = String.valueOf(m.getValue("content"));
      for (Map.Entry<String, List<String>> plan : cells.entrySet()) {
        if (!text.contains(plan.getKey())) {
          continue;
        }
        int results = 0;
        String last = "";
        for (int j = i + 1; j < messages.size(); j++) {
          if ("tool".equals(messages.getJsonObject(j).getString("role"))) {
            results++;
            last = new JsonObject(messages.getJsonObject(j).getString("content")).getString("stdout");
          }
        }
        ScriptedModelServer.Held held = holds.remove(plan.getKey() + "#" + results);
        if (held != null) {
          return held; // never answered
        }
        return results < plan.getValue().size() ? ScriptedModelServer.execute(plan.getValue().get(results))
            : ScriptedModelServer.answer(answer(last), String.join("\n", plan.getValue()));
      }
    }
    return ScriptedModelServer.message("no plan in this conversation");
  }
}
