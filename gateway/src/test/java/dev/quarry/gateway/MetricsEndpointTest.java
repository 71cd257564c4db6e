package dev.quarry.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.api.TestGateway;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("GET /metrics, after an ingest, a refused ingest and a search")
class MetricsEndpointTest {
  static final String DOCUMENT = "# Tides\n\nThe harbour of Port Halvard floods twice a day.\n\n"
      + "## Spring tides\n\nAt spring tides the quay is under water for an hour.\n";

  private TestGateway gateway;
  private Scrape scrape;
  private String contentType;
  private JsonObject readyz;

  @BeforeAll
  void exercise() throws Exception {
    gateway = TestGateway.start();
    HttpResponse<Buffer> ingested = gateway.client().post("/v1/documents").sendJsonObject(new JsonObject()
        .put("title", "Tides").put("uri", "tides.md").put("content", DOCUMENT)
        .put("content_type", "text/markdown")).await();
    assertThat(ingested.statusCode()).as(ingested.bodyAsString()).isEqualTo(201);
    HttpResponse<Buffer> empty = gateway.client().post("/v1/documents").sendJsonObject(new JsonObject()
        .put("title", "Empty").put("uri", "empty.md").put("content", "")
        .put("content_type", "text/markdown")).await();
    assertThat(empty.statusCode()).as(empty.bodyAsString()).isEqualTo(422);
    HttpResponse<Buffer> searched = gateway.client().post("/v1/search")
        .sendJsonObject(new JsonObject().put("query", "when does the quay flood").put("limit", 3)).await();
    assertThat(searched.statusCode()).as(searched.bodyAsString()).isEqualTo(200);
    HttpResponse<Buffer> ready = gateway.client().get("/readyz").send().await();
    assertThat(ready.statusCode()).as(ready.bodyAsString()).isEqualTo(200);
    readyz = ready.bodyAsJsonObject();
    for (String method : java.util.List.of("BREW", "WHEN", "X" + "Y".repeat(300))) {
      HttpResponse<Buffer> odd = gateway.bareClient().request(io.vertx.core.http.HttpMethod.valueOf(method), "/v1/search")
          .send().await();
      assertThat(odd.statusCode()).as(method).isBetween(400, 499);
    }
    HttpResponse<Buffer> metrics = gateway.metricsClient().get("/metrics").send().await();
    assertThat(metrics.statusCode()).isEqualTo(200);
    contentType = metrics.getHeader("Content-Type");
    scrape = Scrape.parse(metrics.bodyAsString());
  }

  @AfterAll
  void stop() throws Exception {
    gateway.close();
  }

  @Test
  @DisplayName("is the Prometheus text format")
  void format() {
    assertThat(contentType).startsWith("text/plain; version=0.0.4");
  }

  @Test
  @DisplayName("counts the ingested document, its chunks and bytes, and times it")
  void ingestion() {
    assertThat(scrape.value("quarry_ingest_documents_total", "status", "created")).isEqualTo(1);
    assertThat(scrape.value("quarry_ingest_documents_total", "status", "unchanged")).isZero();
    assertThat(scrape.value("quarry_ingest_chunks_total")).isGreaterThanOrEqualTo(1);
    assertThat(scrape.value("quarry_ingest_bytes_total", "source_type", "markdown"))
        .isEqualTo(DOCUMENT.getBytes(StandardCharsets.UTF_8).length);
    assertThat(scrape.value("quarry_ingest_duration_seconds_count", "outcome", "success")).isEqualTo(1);
    assertThat(scrape.value("quarry_ingest_duration_seconds_bucket", "outcome", "success", "le", "+Inf")).isEqualTo(1);
  }

  @Test
  @DisplayName("counts the refused ingest by its reason")
  void ingestFailure() {
    assertThat(scrape.value("quarry_ingest_failures_total", "reason", "empty")).isEqualTo(1);
    assertThat(scrape.value("quarry_ingest_duration_seconds_count", "outcome", "failure")).isEqualTo(1);
  }

  @Test
  @DisplayName("times the search and counts its results")
  void search() {
    assertThat(scrape.value("quarry_search_duration_seconds_count", "outcome", "success")).isEqualTo(1);
    assertThat(scrape.value("quarry_search_results_count")).isEqualTo(1);
    assertThat(scrape.value("quarry_search_results_sum")).isBetween(1.0, 3.0);
  }

  @Test
  @DisplayName("has Vert.x's HTTP server meters, labelled by route pattern and never by path")
  void httpServer() {
    assertThat(scrape.value("vertx_http_server_requests_total", "route", "/v1/search", "code", "200"))
        .isEqualTo(1);
    assertThat(scrape.value("vertx_http_server_requests_total", "route", "/v1/documents", "code", "422"))
        .isEqualTo(1);
    // The test gateway's own set-up (its API key, through the admin API) posts too: count these routes only.
    assertThat(scrape.value("vertx_http_server_response_time_seconds_count", "method", "POST", "route", "/v1/documents"))
        .isEqualTo(2);
    assertThat(scrape.value("vertx_http_server_response_time_seconds_count", "method", "POST", "route", "/v1/search"))
        .isEqualTo(1);
    assertThat(scrape.samples()).noneMatch(s -> s.labels().containsKey("path"));
    // The SLO rules read the 1 s bucket.
    assertThat(scrape.value("vertx_http_server_response_time_seconds_bucket", "route", "/v1/search", "le", "1.0"))
        .isEqualTo(1);
  }

  @Test
  @DisplayName("labels a request's method only when it is a standard one: any other token a client sends is OTHER")
  void methodLabelsAreBounded() {
    var methods = scrape.samples().stream().map(sample -> sample.labels().get("method"))
        .filter(java.util.Objects::nonNull).collect(java.util.stream.Collectors.toSet());
    assertThat(methods).contains("POST", "OTHER").allMatch(m -> m.equals("OTHER") || m.matches("[A-Z]{3,7}"))
        .doesNotContain("BREW", "WHEN");
  }

  @Test
  @DisplayName("shows each readiness check as a dependency that is up")
  void dependencies() {
    assertThat(scrape.value("quarry_dependency_up", "check", "database")).isEqualTo(1);
    assertThat(scrape.value("quarry_dependency_up", "check", "migrations")).isEqualTo(1);
    assertThat(scrape.value("quarry_dependency_up", "check", "docker")).isEqualTo(1);
  }

  @Test
  @DisplayName("reports the missing model endpoint as down without making the gateway unready")
  void modelNotConfigured() {
    JsonObject model = readyz.getJsonObject("checks").getJsonObject("model");
    assertThat(model.getBoolean("ok")).isFalse();
    assertThat(model.getBoolean("required")).isFalse();
    assertThat(model.getString("detail")).contains("OPENAI_BASE_URL");
    assertThat(readyz.getString("status")).isEqualTo("ready");
    assertThat(scrape.value("quarry_dependency_up", "check", "model")).isZero();
  }

  @Test
  @DisplayName("has the database pool's and the JVM's meters")
  void poolAndJvm() {
    assertThat(scrape.names()).anyMatch(n -> n.startsWith("vertx_pool_"));
    assertThat(scrape.value("jvm_memory_used_bytes", "area", "heap")).isPositive();
    assertThat(scrape.names()).contains("jvm_threads_live_threads", "process_cpu_usage", "jvm_gc_memory_allocated_bytes_total");
  }

  @Test
  @DisplayName("shows the analysis, sandbox and model meters at zero before any analysis ran")
  void idleMeters() {
    assertThat(scrape.value("quarry_analyses_started_total")).isZero();
    assertThat(scrape.value("quarry_analyses_running")).isZero();
    assertThat(scrape.value("quarry_sandbox_start_failures_total", "reason", "launch")).isZero();
    assertThat(scrape.value("quarry_sandbox_warm_pool_size")).isZero();
    assertThat(scrape.value("quarry_model_errors_total", "kind", "server_error")).isZero();
  }

  @Test
  @DisplayName("is served on a port of its own: the API's port answers 404 to it, with a tenant's key,"
      + " the admin token or nothing; the metrics port serves nothing else but the probes")
  void ownPort() {
    assertThat(gateway.metricsPort()).isNotEqualTo(gateway.port());
    for (var client : java.util.List.of(gateway.client(), gateway.admin(), gateway.bareClient())) {
      HttpResponse<Buffer> onApi = client.get("/metrics").send().await();
      assertThat(onApi.statusCode()).isEqualTo(404);
      assertThat(onApi.bodyAsString()).doesNotContain("quarry_");
    }
    for (String path : java.util.List.of("/v1/documents", "/v1/search", "/v1/admin/tenants", "/")) {
      assertThat(gateway.metricsClient().get(path).send().await().statusCode()).as(path).isEqualTo(404);
    }
    // The probes answer there too, so the kubelet's liveness probe does not depend on the API port.
    assertThat(gateway.metricsClient().get("/healthz").send().await().bodyAsJsonObject().getString("status"))
        .isEqualTo("alive");
    assertThat(gateway.metricsClient().get("/readyz").send().await().statusCode()).isEqualTo(200);
    assertThat(gateway.metricsClient().post("/metrics").send().await().statusCode()).isEqualTo(405);
  }

  @Test
  @DisplayName("a metrics port already in use fails start-up with a message naming QUARRY_METRICS_PORT")
  void portTaken() throws Exception {
    try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("0.0.0.0"));
        dev.quarry.support.TestDatabase db = dev.quarry.support.TestDatabase.create()) {
      java.nio.file.Path dataDir = java.nio.file.Files.createTempDirectory("quarry-metrics-port");
      dev.quarry.telemetry.QuarryMetrics metrics = new dev.quarry.telemetry.QuarryMetrics();
      io.vertx.core.Vertx vertx = Gateway.vertx(metrics);
      try {
        Gateway g = new Gateway(db.config().withDataDir(dataDir).withHttpPort(0),
            OpsSettings.DEFAULTS.withMetricsPort(taken.getLocalPort()), metrics);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> vertx.deployVerticle(g).await())
            .hasMessageContaining("QUARRY_METRICS_PORT")
            .hasMessageContaining(String.valueOf(taken.getLocalPort()));
      } finally {
        vertx.close().await();
        try (var walk = java.nio.file.Files.walk(dataDir)) {
          walk.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
      }
    }
  }
}
