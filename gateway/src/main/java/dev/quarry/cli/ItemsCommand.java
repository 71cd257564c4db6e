package dev.quarry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "items", mixinStandardHelpOptions = true,
    description = "Show a document's items (items.jsonl) in reading order.")
final class ItemsCommand implements Callable<Integer> {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Mixin ClientOptions options;
  @Spec CommandSpec spec;

  @Parameters(index = "0", paramLabel = "ID", description = "The document's id.")
  String id;

  @Option(names = "--from", paramLabel = "POSITION", defaultValue = "0", description = "First position shown (default 0).")
  int from;

  @Option(names = "--limit", paramLabel = "N", defaultValue = "20", description = "How many items (default 20).")
  int limit;

  @Option(names = "--json", description = "Print the items.jsonl lines as they came.")
  boolean json;

  @Override
  public Integer call() throws IOException {
    String body = options.client().getText("/v1/documents/" + GatewayClient.encode(id) + "/items");
    List<String> lines = body.lines().skip(Math.max(0, from)).limit(Math.max(0, limit)).toList();
    PrintWriter out = spec.commandLine().getOut();
    for (String line : lines) {
      if (json) {
        out.println(line);
        continue;
      }
      JsonNode item = JSON.readTree(line);
      String text = item.path("text").asText().replace("\n", "\n        ");
      out.printf("%4d  %-14s %-12s%s%n        %s%n", item.path("position").asInt(), item.path("label").asText(),
          item.path("self_ref").asText(), SearchCommand.pages(item.path("page_numbers")), text);
    }
    out.flush();
    return 0;
  }
}
