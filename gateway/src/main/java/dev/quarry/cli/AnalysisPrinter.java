package dev.quarry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;

/**
 * An analysis' events as a person reads them, as they come: each step's code, callbacks, output and
 * result, then the answer, its citations and the program, or why it ended without one. Shared by
 * {@code quarry ask} and the demo's questions, so that the demo shows exactly what {@code ask} does.
 * It remembers what the caller needs afterwards (the analysis' id, whether it answered).
 */
final class AnalysisPrinter {
  private final PrintWriter out;
  private String analysisId;
  private boolean answered;
  private boolean failed;
  private int citations;

  AnalysisPrinter(PrintWriter out) {
    this.out = out;
  }

  String analysisId() {
    return analysisId;
  }

  boolean answered() {
    return answered;
  }

  boolean failed() {
    return failed;
  }

  int citations() {
    return citations;
  }

  /** Takes note of one event without printing it. */
  void observe(JsonNode e) {
    switch (e.path("type").asText()) {
      case "started" -> analysisId = e.path("analysis_id").asText();
      case "answer" -> {
        answered = true;
        citations = e.path("citations").size();
      }
      case "failed" -> failed = true;
      default -> { }
    }
  }

  /** Prints one event (the JSON data of the analysis' stream) and flushes. */
  void print(JsonNode e) {
    observe(e);
    switch (e.path("type").asText()) {
      case "started" -> {
        out.println("analysis " + analysisId + " (" + e.path("model").asText() + ")");
      }
      case "model_turn" -> {
        String content = e.path("content").asText("");
        if (!content.isBlank() && e.path("tool_calls").isEmpty()) {
          out.println("model: " + firstLine(content));
        }
      }
      case "code" -> {
        out.println("── step " + e.path("step").asInt() + " ──");
        e.path("code").asText().lines().forEach(l -> out.println("  │ " + l));
      }
      case "output" -> e.path("text").asText().lines().forEach(l -> out.println("  > " + l));
      case "callback" -> out.println("  ↪ " + e.path("kind").asText() + " " + e.path("arguments"));
      case "cell_result" -> {
        JsonNode r = e.path("result");
        if (r.path("success").asBoolean()) {
          out.println("  ✓ " + r.path("duration_ms").asLong() + " ms");
        } else {
          out.println("  ✗ " + r.path("error").path("type").asText() + ": " + r.path("error").path("message").asText());
        }
      }
      case "answer" -> {
        out.println();
        out.println("Answer:");
        out.println(e.path("answer").asText());
        out.println();
        out.println("Citations:");
        if (e.path("citations").isEmpty()) {
          out.println("  (none)");
        }
        for (JsonNode c : e.path("citations")) {
          out.println("  - " + c.path("title").asText() + " (" + c.path("uri").asText() + ")" + pages(c.path("pages"))
              + " " + c.path("document_id").asText());
        }
        out.println();
        out.println("Program:");
        out.println(e.path("program").asText());
      }
      case "failed" -> {
        JsonNode error = e.path("error");
        out.println();
        out.println("The analysis ended without an answer (" + e.path("status").asText() + "): "
            + error.path("type").asText() + ": " + error.path("message").asText());
      }
      default -> { }
    }
    out.flush();
  }

  private static String pages(JsonNode pages) {
    if (pages.isEmpty()) {
      return "";
    }
    StringBuilder s = new StringBuilder(" p.");
    pages.forEach(p -> s.append(s.length() > 3 ? "," : " ").append(p.asInt()));
    return s.toString();
  }

  private static String firstLine(String text) {
    String line = text.strip().lines().findFirst().orElse("");
    return line.length() > 200 ? line.substring(0, 200) + "…" : line;
  }
}
