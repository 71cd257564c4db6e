package dev.quarry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "ask", mixinStandardHelpOptions = true,
    description = "Ask a question: the model's code and its output stream in as they happen, then the"
        + " answer, its citations and the program that reproduces it.")
final class AskCommand implements Callable<Integer> {
  @Mixin ClientOptions options;
  @Spec CommandSpec spec;

  @Parameters(arity = "1..*", paramLabel = "QUESTION", description = "The question (several words need no quotes).")
  List<String> words;

  @Option(names = "--document", paramLabel = "ID", description = "Only look at this document (repeatable).")
  List<String> documentIds;

  @Option(names = "--preload", description = "Give the code the --document documents as the `documents` variable.")
  boolean preload;

  @Option(names = "--json", description = "Print each event's JSON as it came.")
  boolean json;

  private boolean failed;

  @Override
  public Integer call() {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("question", String.join(" ", words));
    if (documentIds != null) {
      body.put("document_ids", documentIds);
    }
    if (preload) {
      body.put("preload", true);
    }
    body.put("stream", true);
    PrintWriter out = spec.commandLine().getOut();
    options.client().postEventStream("/v1/analyses", body, (name, event) -> {
      if (json) {
        out.println(event.toString());
      } else {
        print(out, event);
      }
      out.flush();
    });
    return failed ? 1 : 0;
  }

  private void print(PrintWriter out, JsonNode e) {
    switch (e.path("type").asText()) {
      case "started" -> out.println("analysis " + e.path("analysis_id").asText() + " (" + e.path("model").asText() + ")");
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
        failed = true;
        JsonNode error = e.path("error");
        out.println();
        out.println("The analysis ended without an answer (" + e.path("status").asText() + "): "
            + error.path("type").asText() + ": " + error.path("message").asText());
      }
      default -> { }
    }
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
