package dev.quarry.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.api.TestGateway;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("The gateway's health, readiness and drain")
class GatewayOpsTest {

  @Test
  @DisplayName("/readyz checks the database, the migrations and Docker; /healthz says alive")
  void readyWithChecks() throws Exception {
    try (TestGateway gateway = TestGateway.start()) {
      HttpResponse<Buffer> ready = gateway.client().get("/readyz").send().await();
      JsonObject body = ready.bodyAsJsonObject();
      assertThat(ready.statusCode()).as(body.encodePrettily()).isEqualTo(200);
      assertThat(body.getString("status")).isEqualTo("ready");
      assertThat(body.getString("lifecycle")).isEqualTo("serving");
      JsonObject checks = body.getJsonObject("checks");
      assertThat(checks.fieldNames()).contains("database", "migrations", "docker");
      assertThat(checks.getJsonObject("migrations").getString("detail"))
          .isEqualTo("schema version " + body.getInteger("schema_version"));
      assertThat(gateway.client().get("/healthz").send().await().bodyAsJsonObject().getString("status"))
          .isEqualTo("alive");
    }
  }

  @Test
  @DisplayName("a failing check makes /readyz answer 503 and name the check and its reason")
  void failingCheck() throws Exception {
    try (TestGateway gateway = TestGateway.start()) {
      gateway.gateway().readiness().add("model", () -> Future.failedFuture("no model endpoint configured"));
      HttpResponse<Buffer> ready = gateway.client().get("/readyz").send().await();
      assertThat(ready.statusCode()).isEqualTo(503);
      JsonObject model = ready.bodyAsJsonObject().getJsonObject("checks").getJsonObject("model");
      assertThat(model.getBoolean("ok")).isFalse();
      assertThat(model.getString("detail")).isEqualTo("no model endpoint configured");
    }
  }

  @Test
  @DisplayName("while draining: not ready, new work refused, running work finishes, then the cleanups run")
  void drain() throws Exception {
    try (TestGateway gateway = TestGateway.start()) {
      Lifecycle lifecycle = gateway.gateway().lifecycle();
      AtomicBoolean cleaned = new AtomicBoolean();
      lifecycle.onShutdown("remove sandboxes", () -> {
        cleaned.set(true);
        return Future.succeededFuture();
      });
      Lifecycle.Work analysis = lifecycle.begin("analysis", reason -> {});
      Future<Void> drained = lifecycle.drain(Duration.ofMinutes(5));

      HttpResponse<Buffer> ready = gateway.client().get("/readyz").send().await();
      assertThat(ready.statusCode()).isEqualTo(503);
      assertThat(ready.bodyAsJsonObject().getString("lifecycle")).isEqualTo("draining");
      assertThat(lifecycle.accepting()).isFalse();
      // Requests other than new analyses are still served while running work drains.
      assertThat(gateway.client().get("/v1/documents").send().await().statusCode()).isEqualTo(200);
      assertThat(cleaned).isFalse();

      analysis.close();
      drained.await();
      assertThat(cleaned).isTrue();
    }
  }
}
