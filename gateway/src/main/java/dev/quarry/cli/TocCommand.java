package dev.quarry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "toc", mixinStandardHelpOptions = true,
    description = "Show a document's section tree (toc.json), with each section's item range.")
final class TocCommand implements Callable<Integer> {
  @Mixin ClientOptions options;
  @Spec CommandSpec spec;

  @Parameters(index = "0", paramLabel = "ID", description = "The document's id.")
  String id;

  @Option(names = "--json", description = "Print toc.json as it came.")
  boolean json;

  @Override
  public Integer call() {
    JsonNode toc = options.client().getJson("/v1/documents/" + GatewayClient.encode(id) + "/toc");
    PrintWriter out = spec.commandLine().getOut();
    if (json) {
      out.println(toc.toString());
    } else {
      out.println(toc.path("title").asText());
      if (toc.path("tree").isEmpty()) {
        out.println("  (no sections)");
      }
      toc.path("tree").forEach(node -> print(out, node, 1));
    }
    out.flush();
    return 0;
  }

  private static void print(PrintWriter out, JsonNode node, int depth) {
    JsonNode range = node.path("item_range");
    out.printf("%s%s  [items %d–%d]%s%n", "  ".repeat(depth), node.path("title").asText(),
        range.path(0).asInt(), range.path(1).asInt() - 1, SearchCommand.pages(node.path("page_numbers")));
    node.path("children").forEach(child -> print(out, child, depth + 1));
  }
}
