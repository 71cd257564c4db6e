package dev.quarry.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Prints the MCP client configuration for this gateway and key, to paste into a desktop or IDE
 * assistant. The key is checked against the gateway first, so that what is pasted works.
 */
@Command(name = "mcp", mixinStandardHelpOptions = true,
    description = "Print the MCP client configuration (Streamable HTTP at URL/mcp, with your API key) for a"
        + " desktop or IDE assistant's mcpServers settings.")
final class McpCommand implements Callable<Integer> {
  @Mixin ClientOptions options;
  @Spec CommandSpec spec;

  @Option(names = "--name", defaultValue = "quarry", description = "The server's name in the configuration.")
  String name;

  @Option(names = "--no-check", description = "Do not check the key against the gateway first.")
  boolean noCheck;

  @Override
  public Integer call() throws Exception {
    GatewayClient client = options.client();
    if (!noCheck) {
      client.getJson("/v1/documents?limit=1"); // a bad key or an unreachable gateway fails here, clearly
    }
    ObjectMapper json = new ObjectMapper();
    ObjectNode root = json.createObjectNode();
    ObjectNode server = root.putObject("mcpServers").putObject(name);
    server.put("type", "http");
    server.put("url", options.url.replaceAll("/+$", "") + "/mcp");
    server.putObject("headers").put("Authorization", "Bearer " + options.apiKey.strip());
    PrintWriter out = spec.commandLine().getOut();
    out.println(json.writerWithDefaultPrettyPrinter().writeValueAsString(root));
    out.flush();
    return 0;
  }
}
