package dev.quarry.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.api.TestGateway;
import dev.quarry.gateway.Gateway;
import dev.quarry.sandbox.SandboxSettings;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("A gateway without a model endpoint")
class AnalysisWithoutModelTest {
  static TestGateway gateway;

  @BeforeAll
  static void start() throws Exception {
    gateway = TestGateway.startWithAgent(dataDir -> new Gateway.AgentWiring(AgentSettings.fromEnv(Map.of()),
        SandboxSettings.fromEnv(Map.of())));
  }

  @AfterAll
  static void stop() throws Exception {
    gateway.close();
  }

  @Test
  @DisplayName("refuses analyses at once with a 503 that says how to configure one, and serves the rest")
  void refusesAnalyses() {
    var refused = gateway.client().post("/v1/analyses").sendJsonObject(new JsonObject().put("question", "q")).await();
    assertThat(refused.statusCode()).isEqualTo(503);
    JsonObject error = refused.bodyAsJsonObject().getJsonObject("error");
    assertThat(error.getString("code")).isEqualTo("model_not_configured");
    assertThat(error.getString("message")).contains("OPENAI_BASE_URL").contains("QUARRY_MODEL");
    assertThat(gateway.client().get("/v1/analyses").send().await().statusCode()).isEqualTo(200);
    assertThat(gateway.client().get("/v1/documents").send().await().statusCode()).isEqualTo(200);
  }
}
