package dev.quarry.agent;

import io.vertx.core.json.JsonObject;

/**
 * One event of an analysis, in the order it happened. {@code json} is exactly what a live stream
 * sends and a replay sends again: {@code {"seq", "type", "at", ...}}.
 */
public record AnalysisEvent(long seq, String type, String json) {

  public static final String STARTED = "started";
  public static final String MODEL_TURN = "model_turn";
  public static final String CODE = "code";
  public static final String OUTPUT = "output";
  public static final String CALLBACK = "callback";
  public static final String CELL_RESULT = "cell_result";
  public static final String ANSWER = "answer";
  public static final String FAILED = "failed";
  /** The analysis was taken over by another replica (its own died or handed it off); it goes on there. */
  public static final String MOVED = "moved";

  public boolean terminal() {
    return ANSWER.equals(type) || FAILED.equals(type);
  }

  static AnalysisEvent of(long seq, String type, long atMillis, JsonObject data) {
    JsonObject json = new JsonObject().put("seq", seq).put("type", type)
        .put("at", java.time.Instant.ofEpochMilli(atMillis).toString());
    data.forEach(e -> json.put(e.getKey(), e.getValue()));
    return new AnalysisEvent(seq, type, json.encode());
  }

  /** The event as one Server-Sent Events message. */
  public String sse() {
    return "id: " + seq + "\nevent: " + type + "\ndata: " + json + "\n\n";
  }
}
