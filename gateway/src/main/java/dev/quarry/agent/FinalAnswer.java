package dev.quarry.agent;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;

/** The model's final message, {@code {"answer", "program"}}, parsed strictly. */
public record FinalAnswer(String answer, String program) {

  /**
   * The answer in a final message, or an {@link IllegalArgumentException} whose message tells the
   * model what to fix. A Markdown code fence around the object is tolerated; anything else around it
   * is not.
   */
  public static FinalAnswer parse(String content) {
    String text = content == null ? "" : content.strip();
    if (text.startsWith("```")) {
      int firstNewline = text.indexOf('\n');
      if (firstNewline > 0 && text.endsWith("```") && text.length() >= firstNewline + 4) {
        text = text.substring(firstNewline + 1, text.length() - 3).strip();
      }
    }
    if (text.isEmpty()) {
      throw new IllegalArgumentException("the final message is empty");
    }
    JsonObject json;
    try {
      json = new JsonObject(text);
    } catch (DecodeException | ClassCastException e) {
      throw new IllegalArgumentException("the final message is not a JSON object");
    }
    Object answer = json.getValue("answer");
    Object program = json.getValue("program");
    if (!(answer instanceof String a) || a.isBlank()) {
      throw new IllegalArgumentException("the key \"answer\" must be a non-empty string");
    }
    if (!(program instanceof String p) || p.isBlank()) {
      throw new IllegalArgumentException("the key \"program\" must be a non-empty string holding the program");
    }
    return new FinalAnswer(a, p);
  }
}
