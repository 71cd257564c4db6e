package dev.quarry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import java.util.ArrayList;
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

@Command(name = "search", mixinStandardHelpOptions = true,
    description = "Hybrid search over the knowledge base; each hit comes with its expanded context.")
final class SearchCommand implements Callable<Integer> {
  private static final int SNIPPET_LINES = 8;
  private static final int SNIPPET_WIDTH = 160;

  @Mixin ClientOptions options;
  @Spec CommandSpec spec;

  @Parameters(arity = "1..*", paramLabel = "QUERY", description = "The query (several words need no quotes).")
  List<String> words;

  @Option(names = "--limit", paramLabel = "N", description = "How many hits (default: the gateway's).")
  Integer limit;

  @Option(names = "--document", paramLabel = "ID", description = "Search only in this document (repeatable).")
  List<String> documentIds;

  @Option(names = "--json", description = "Print the gateway's JSON response as it came.")
  boolean json;

  @Option(names = "--full", description = "Print each hit's whole expanded context, not a snippet.")
  boolean full;

  @Override
  public Integer call() {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("query", String.join(" ", words));
    if (limit != null) {
      body.put("limit", limit);
    }
    if (documentIds != null) {
      body.put("document_ids", documentIds);
    }
    JsonNode response = options.client().postJson("/v1/search", body);
    PrintWriter out = spec.commandLine().getOut();
    if (json) {
      out.println(response.toString());
      out.flush();
      return 0;
    }
    JsonNode results = response.path("results");
    if (results.isEmpty()) {
      out.println("no results");
    }
    int rank = 1;
    for (JsonNode hit : results) {
      out.printf("%2d. [%.4f] %s%s%n", rank++, hit.path("score").asDouble(),
          hit.path("document_title").asText(), pages(hit.path("page_numbers")));
      List<String> headings = strings(hit.path("headings"));
      if (!headings.isEmpty()) {
        out.println("    § " + String.join(" › ", headings));
      }
      snippet(hit.path("content").asText()).forEach(line -> out.println("    │ " + line));
      out.println();
    }
    out.flush();
    return 0;
  }

  private List<String> snippet(String content) {
    List<String> lines = content.lines().filter(l -> !l.isBlank()).toList();
    if (full) {
      return lines;
    }
    List<String> shown = new ArrayList<>();
    for (String line : lines.subList(0, Math.min(SNIPPET_LINES, lines.size()))) {
      shown.add(line.length() > SNIPPET_WIDTH ? line.substring(0, SNIPPET_WIDTH - 1) + "…" : line);
    }
    if (lines.size() > SNIPPET_LINES) {
      shown.add("… (" + (lines.size() - SNIPPET_LINES) + " more lines; --full shows them)");
    }
    return shown;
  }

  static String pages(JsonNode pageNumbers) {
    List<String> pages = strings(pageNumbers);
    if (pages.isEmpty()) {
      return "";
    }
    return pages.size() == 1 ? "  (p. " + pages.get(0) + ")" : "  (pp. " + String.join(", ", pages) + ")";
  }

  static List<String> strings(JsonNode array) {
    List<String> values = new ArrayList<>();
    array.forEach(v -> values.add(v.asText()));
    return values;
  }
}
