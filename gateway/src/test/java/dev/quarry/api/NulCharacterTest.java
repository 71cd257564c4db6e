package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.sandbox.RunnerImage;
import dev.quarry.sandbox.SandboxLimits;
import dev.quarry.sandbox.SandboxSettings;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * U+0000 anywhere a client or a cell can put text (found attacking a running gateway: a search query
 * with it answered 500, PostgreSQL refusing the byte). Text and jsonb cannot hold it, so it is
 * refused where it comes in, naming the field: every JSON body, every multipart text field and file
 * name, and search() from sandbox code (a ValueError in the cell).
 */
@DisplayName("A NUL character in any text a client or a cell sends is refused where it comes in, never a 500")
class NulCharacterTest {
  static TestGateway gateway;

  @BeforeAll
  static void setUp() throws Exception {
    SandboxSettings settings = new SandboxSettings(SandboxSettings.DEFAULT_DOCKER_HOST, RunnerImage.ensure(),
        List.of(), "", "nul-" + UUID.randomUUID().toString().substring(0, 8), Path.of("set-below"),
        SandboxLimits.DEFAULTS, SandboxLimits.MAXIMUMS, 0, Duration.ofMinutes(10), false);
    gateway = TestGateway.startWithAgent(dataDir -> new dev.quarry.gateway.Gateway.AgentWiring(null,
        settings.withRunRoot(dataDir.resolve("run"))));
  }

  @AfterAll
  static void tearDown() throws Exception {
    if (gateway != null) {
      gateway.close();
    }
  }

  @Test
  @DisplayName("JSON bodies: 400 nul_character naming the field, on every JSON route, in values, nested values and names")
  void jsonBodies() {
    String nul = "a\\u0000b";
    Map<String, String> bodies = Map.of(
        "/v1/search", "{\"query\": \"" + nul + "\"}",
        "/v1/documents", "{\"title\": \"t\", \"uri\": \"notes://x\", \"content\": \"# " + nul + "\", \"content_type\": \"text/markdown\"}",
        "/v1/executions", "{\"code\": \"print(1)\", \"limits\": {\"wall_time_ms\": 1000}, \"document_ids\": [\"" + nul + "\"]}",
        "/v1/analyses", "{\"question\": \"" + nul + "\"}",
        "/v1/chat/completions", "{\"model\": \"quarry\", \"messages\": [{\"role\": \"user\", \"content\": \"" + nul + "\"}]}");
    for (var e : bodies.entrySet()) {
      RawHttp.Answer a = RawHttp.send(gateway.port(), "POST", e.getKey(), gateway.apiKey(), e.getValue());
      assertThat(a.status()).as(e.getKey() + " " + a).isEqualTo(400);
      assertThat(a.body()).as(e.getKey()).contains("nul_character");
    }
    RawHttp.Answer nested = RawHttp.send(gateway.port(), "POST", "/v1/executions", gateway.apiKey(), bodies.get("/v1/executions"));
    assertThat(nested.body()).contains("document_ids[0]");
    RawHttp.Answer name = RawHttp.send(gateway.port(), "POST", "/v1/search", gateway.apiKey(),
        "{\"query\": \"x\", \"li\\u0000mit\": 3}");
    assertThat(name.status()).as(name.toString()).isEqualTo(400);
    RawHttp.Answer admin = RawHttp.send(gateway.port(), "POST", "/v1/admin/tenants", TestGateway.ADMIN_TOKEN,
        "{\"name\": \"" + nul + "\"}");
    assertThat(admin.status()).as(admin.toString()).isEqualTo(400);
    assertThat(admin.body()).contains("nul_character").contains("'name'");
  }

  @Test
  @DisplayName("multipart: a text field or a file name with a NUL is 400 nul_character")
  void multipart() {
    for (String[] part : List.of(new String[] {"title", "ti\0tle", "ok.md"}, new String[] {"uri", "notes://\0", "ok.md"},
        new String[] {"title", "fine", "o\0k.md"})) {
      String body = "--XX\r\nContent-Disposition: form-data; name=\"" + part[0] + "\"\r\n\r\n" + part[1]
          + "\r\n--XX\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + part[2]
          + "\"\r\nContent-Type: text/markdown\r\n\r\n# Title\n\nText.\n\r\n--XX--\r\n";
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      String head = "POST /v1/documents HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nAuthorization: Bearer "
          + gateway.apiKey() + "\r\nContent-Type: multipart/form-data; boundary=XX\r\nContent-Length: " + bytes.length
          + "\r\n\r\n";
      RawHttp.Answer a = RawHttp.send(gateway.port(), head.getBytes(StandardCharsets.UTF_8), bytes);
      assertThat(a.status()).as(String.join(" ", part) + " " + a).isEqualTo(400);
      assertThat(a.body()).contains("nul_character");
    }
    assertThat(gateway.client().get("/v1/documents").send().await().bodyAsJsonObject().getJsonArray("documents"))
        .as("nothing stored").isEmpty();
  }

  @Test
  @DisplayName("search() from a cell with a NUL in its query raises ValueError saying so, in a real sandbox")
  void callback() {
    var r = gateway.client().post("/v1/executions").sendJsonObject(new JsonObject()
        .put("code", "try:\n    await search('a\\x00b')\nexcept ValueError as e:\n    print('refused:', e.args[0])")).await();
    assertThat(r.statusCode()).as(r.bodyAsString()).isEqualTo(200);
    assertThat(r.bodyAsJsonObject().getBoolean("success")).as(r.bodyAsString()).isTrue();
    assertThat(r.bodyAsJsonObject().getString("stdout")).contains("refused:").contains("NUL");
  }
}
