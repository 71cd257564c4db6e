package dev.quarry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "documents", mixinStandardHelpOptions = true, description = "List the knowledge base's documents.")
final class DocumentsCommand implements Callable<Integer> {
  @Mixin ClientOptions options;
  @Spec CommandSpec spec;

  @Option(names = "--json", description = "Print the gateway's JSON response as it came.")
  boolean json;

  @Override
  public Integer call() {
    JsonNode response = options.client().getJson("/v1/documents");
    PrintWriter out = spec.commandLine().getOut();
    if (json) {
      out.println(response.toString());
    } else if (response.path("documents").isEmpty()) {
      out.println("no documents yet; add some with: quarry ingest PATH...");
    } else {
      out.printf("%-36s  %-8s  %6s  %6s  %s%n", "ID", "TYPE", "ITEMS", "CHUNKS", "TITLE (URI)");
      for (JsonNode d : response.path("documents")) {
        out.printf("%-36s  %-8s  %6d  %6d  %s (%s)%n", d.path("id").asText(), d.path("source_type").asText(),
            d.path("item_count").asInt(), d.path("chunk_count").asInt(), d.path("title").asText(),
            d.path("uri").asText());
      }
    }
    out.flush();
    return 0;
  }
}
