package dev.quarry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.quarry.api.TestGateway;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("quarry mcp prints a configuration an MCP client connects with")
class CliMcpTest {
  @AutoClose final TestGateway gateway = TestGateway.started();

  @Test
  @DisplayName("the printed url and header connect the SDK's client; a gateway without a model offers no ask")
  void configurationWorks() throws Exception {
    CliRun run = CliRun.of("mcp", "--url", gateway.url() + "/", "--api-key", gateway.apiKey());
    assertThat(run.exitCode()).as(run.err()).isZero();
    JsonNode server = new ObjectMapper().readTree(run.out()).path("mcpServers").path("quarry");
    assertThat(server.path("type").asText()).isEqualTo("http");
    URI url = URI.create(server.path("url").asText());
    assertThat(url.getPath()).isEqualTo("/mcp");
    String authorization = server.path("headers").path("Authorization").asText();
    assertThat(authorization).isEqualTo("Bearer " + gateway.apiKey());

    var transport = HttpClientStreamableHttpTransport.builder(url.resolve("/").toString()).endpoint(url.getPath())
        .requestBuilder(HttpRequest.newBuilder().header("Authorization", authorization)).build();
    McpSyncClient client = McpClient.sync(transport).requestTimeout(Duration.ofSeconds(30)).build();
    try {
      client.initialize();
      assertThat(client.listTools().tools()).extracting(McpSchema.Tool::name)
          .containsExactlyInAnyOrder("search", "list_documents", "read_document", "run_code");
      var listed = client.callTool(new McpSchema.CallToolRequest("list_documents", java.util.Map.of()));
      assertThat(listed.isError()).isNotEqualTo(true);
    } finally {
      client.closeGracefully();
    }
  }

  @Test
  @DisplayName("a key the gateway refuses is said at once, and no configuration is printed")
  void badKey() {
    CliRun run = CliRun.of("mcp", "--url", gateway.url(), "--api-key", "qk_000000000000_nope");
    assertThat(run.exitCode()).isNotZero();
    assertThat(run.out()).doesNotContain("mcpServers");
    assertThat(run.err()).containsIgnoringCase("key");
  }
}
