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

  /** A Markdown document of {@code sections} sections of about 150 words: a chunk each. */
  private static JsonObject longDocument(String uri, int sections) {
    java.util.Random random = new java.util.Random(sections);
    String[] words = "harbour flood quay tide spring neap moon ferry vessel cargo crane dock pilot buoy channel"
        .split(" ");
    StringBuilder md = new StringBuilder("# Harbour log\n\n");
    for (int i = 0; i < sections; i++) {
      md.append("## Day ").append(i).append("\n\n");
      for (int w = 0; w < 150; w++) {
        md.append(words[random.nextInt(words.length)]).append(' ');
      }
      md.append("\n\n");
    }
    return new JsonObject().put("uri", uri).put("title", "Harbour log").put("content_type", "text/markdown")
        .put("content", md.toString());
  }

  @Test
  @DisplayName("an ingest under way when the drain starts gets the grace to finish (201, stored); a new one"
      + " while draining is 503 shutting_down")
  void drainLetsIngestFinish() throws Exception {
    try (TestGateway gateway = TestGateway.start()) {
      Lifecycle lifecycle = gateway.gateway().lifecycle();
      Future<HttpResponse<Buffer>> ingest = gateway.client().post("/v1/documents").timeout(300_000)
          .sendJsonObject(longDocument("finishes.md", 100));
      dev.quarry.support.Await.until(() -> lifecycle.running() == 1, Duration.ofSeconds(30),
          "the ingest to register with the drain");
      Future<Void> drained = lifecycle.drain(Duration.ofMinutes(5));

      HttpResponse<Buffer> refused = gateway.client().post("/v1/documents")
          .sendJsonObject(new JsonObject().put("uri", "late.md").put("content", "# Late\n\nToo late.\n")
              .put("content_type", "text/markdown")).await();
      assertThat(refused.statusCode()).as(refused.bodyAsString()).isEqualTo(503);
      assertThat(refused.bodyAsJsonObject().getJsonObject("error").getString("code")).isEqualTo("shutting_down");

      HttpResponse<Buffer> finished = ingest.await();
      assertThat(finished.statusCode()).as(finished.bodyAsString()).isEqualTo(201);
      drained.await();
      assertThat(gateway.count("documents")).isEqualTo(1);
    }
  }

  @Test
  @DisplayName("an ingest still running when the drain's grace is over stops before its next batch of"
      + " chunks: 503 shutting_down naming the file, nothing stored")
  void drainStopsIngestAfterGrace() throws Exception {
    try (TestGateway gateway = TestGateway.start()) {
      Lifecycle lifecycle = gateway.gateway().lifecycle();
      Future<HttpResponse<Buffer>> ingest = gateway.client().post("/v1/documents").timeout(300_000)
          .sendJsonObject(longDocument("cut.md", 200));
      dev.quarry.support.Await.until(() -> lifecycle.running() == 1, Duration.ofSeconds(30),
          "the ingest to register with the drain");
      Future<Void> drained = lifecycle.drain(Duration.ofMillis(200));

      HttpResponse<Buffer> stopped = ingest.await();
      assertThat(stopped.statusCode()).as(stopped.bodyAsString()).isEqualTo(503);
      JsonObject error = stopped.bodyAsJsonObject().getJsonObject("error");
      assertThat(error.getString("code")).isEqualTo("shutting_down");
      assertThat(error.getString("message")).contains("cut.md").contains("nothing of it was stored");
      drained.await();
      assertThat(gateway.count("documents")).isZero();
      assertThat(gateway.count("chunks")).isZero();
    }
  }
}
