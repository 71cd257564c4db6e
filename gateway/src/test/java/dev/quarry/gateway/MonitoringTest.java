package dev.quarry.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.quarry.api.TestGateway;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("monitoring/: Prometheus rules and the Grafana dashboard")
class MonitoringTest {
  private static final Path MONITORING = RepoFiles.root().resolve("monitoring");
  private static final Path RULES = MONITORING.resolve("prometheus/rules");
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  /** Series Prometheus makes itself for every target. */
  private static final Set<String> PROMETHEUS_OWN = Set.of("up");

  @Test
  @DisplayName("promtool accepts the scrape config and the rules, and every alert's rule test passes")
  void promtool() throws Exception {
    promtool("check", "config", "prometheus/prometheus.yml");
    promtool("check", "rules", "prometheus/rules/quarry-recording.yml", "prometheus/rules/quarry-alerts.yml");
    promtool("test", "rules", "prometheus/tests/quarry-alerts_test.yml");
  }

  @Test
  @DisplayName("every alert has a summary, a description and a runbook section, and a promtool test")
  void alertsAreDocumentedAndTested() throws IOException {
    String tests = Files.readString(MONITORING.resolve("prometheus/tests/quarry-alerts_test.yml"));
    String runbook = Files.readString(MONITORING.resolve("RUNBOOK.md"));
    List<String> alerts = new ArrayList<>();
    for (JsonNode rule : rules("quarry-alerts.yml")) {
      String alert = rule.path("alert").asText();
      alerts.add(alert);
      JsonNode annotations = rule.path("annotations");
      assertThat(annotations.path("summary").asText()).as(alert + " summary").isNotBlank();
      assertThat(annotations.path("description").asText()).as(alert + " description").isNotBlank();
      assertThat(annotations.path("runbook").asText()).as(alert + " runbook")
          .startsWith("monitoring/RUNBOOK.md#" + alert.toLowerCase(Locale.ROOT) + ":");
      assertThat(runbook).as("RUNBOOK.md section for " + alert).contains("\n## " + alert + "\n");
      assertThat(tests).as("a promtool test of " + alert).contains("alertname: " + alert + "\n");
    }
    assertThat(alerts).contains("QuarryHighErrorRate", "QuarryLatencySLOFastBurn", "QuarrySandboxStartFailures",
        "QuarrySandboxPoolExhausted", "QuarryModelEndpointFailing", "QuarryDatabaseDown");
  }

  @Test
  @DisplayName("every metric named in the rules and the dashboard is one a running gateway exports")
  void metricsExist() throws Exception {
    Set<String> recorded = new TreeSet<>();
    rules("quarry-recording.yml").forEach(r -> recorded.add(r.path("record").asText()));
    TreeMap<String, String> used = new TreeMap<>();
    for (String file : List.of("quarry-recording.yml", "quarry-alerts.yml")) {
      for (JsonNode rule : rules(file)) {
        PromQl.metricNames(rule.path("expr").asText()).forEach(n -> used.putIfAbsent(n, file));
      }
    }
    JsonNode dashboard = new ObjectMapper().readTree(MONITORING.resolve("grafana/dashboards/quarry.json").toFile());
    int queries = 0;
    for (JsonNode expr : dashboard.findValues("expr")) {
      PromQl.metricNames(expr.asText()).forEach(n -> used.putIfAbsent(n, "quarry.json"));
      queries++;
    }
    for (JsonNode variable : dashboard.path("templating").path("list")) {
      String query = variable.path("query").path("query").asText();
      used.putIfAbsent(query.replaceAll("label_values\\((\\w+),.*", "$1"), "quarry.json variable");
    }
    assertThat(queries).isGreaterThan(30);

    Set<String> exported = scrapeAfterTraffic().names();
    List<String> unknown = new ArrayList<>();
    used.forEach((name, where) -> {
      boolean known = name.contains(":") ? recorded.contains(name)
          : exported.contains(name) || PROMETHEUS_OWN.contains(name);
      if (!known) {
        unknown.add(name + " (in " + where + ")");
      }
    });
    assertThat(unknown).as("metrics named in monitoring/ that Quarry does not export").isEmpty();
    assertThat(used.keySet()).as("the parser finds names at all").contains(
        "vertx_http_server_requests_total", "quarry_sandbox_cold_start_duration_seconds_bucket",
        "quarry_model_tokens_total", "quarry_ingest_documents_total");
  }

  @Test
  @DisplayName("the provisioning files name the datasource uid the dashboard uses")
  void provisioning() throws IOException {
    JsonNode datasources = YAML.readTree(MONITORING.resolve("grafana/provisioning/datasources/prometheus.yml").toFile());
    JsonNode dashboard = new ObjectMapper().readTree(MONITORING.resolve("grafana/dashboards/quarry.json").toFile());
    String uid = datasources.path("datasources").get(0).path("uid").asText();
    assertThat(dashboard.findValues("uid").stream().map(JsonNode::asText))
        .contains(uid).allMatch(u -> u.equals(uid) || u.equals(dashboard.path("uid").asText()));
    JsonNode providers = YAML.readTree(MONITORING.resolve("grafana/provisioning/dashboards/quarry.yml").toFile());
    assertThat(providers.path("providers").get(0).path("type").asText()).isEqualTo("file");
  }

  private static Scrape scrapeAfterTraffic() throws IOException {
    try (TestGateway gateway = TestGateway.start()) {
      HttpResponse<Buffer> ingested = gateway.client().post("/v1/documents").sendJsonObject(new JsonObject()
          .put("title", "Tides").put("uri", "tides.md").put("content", MetricsEndpointTest.DOCUMENT)
          .put("content_type", "text/markdown")).await();
      assertThat(ingested.statusCode()).isEqualTo(201);
      gateway.client().post("/v1/search").sendJsonObject(new JsonObject().put("query", "quay")).await();
      gateway.client().get("/readyz").send().await();
      return Scrape.parse(gateway.metricsClient().get("/metrics").send().await().bodyAsString());
    }
  }

  private static List<JsonNode> rules(String file) throws IOException {
    List<JsonNode> rules = new ArrayList<>();
    for (JsonNode group : YAML.readTree(RULES.resolve(file).toFile()).path("groups")) {
      group.path("rules").forEach(rules::add);
    }
    assertThat(rules).as(file).isNotEmpty();
    return rules;
  }

  /** Runs promtool from monitoring/; fails with its output unless it exits 0. */
  static void promtool(String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of("promtool"));
    command.addAll(List.of(args));
    Process p;
    try {
      p = new ProcessBuilder(command).directory(MONITORING.toFile()).redirectErrorStream(true).start();
    } catch (IOException e) {
      throw new AssertionError("promtool is not installed: it comes with Debian's prometheus package, "
          + "which ./quarry setup installs (" + e.getMessage() + ")");
    }
    try {
      p.getOutputStream().close();
      String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(p.waitFor(2, TimeUnit.MINUTES)).as("promtool finished").isTrue();
      assertThat(p.exitValue()).as(String.join(" ", command) + "\n" + output).isZero();
    } finally {
      p.destroyForcibly();
    }
  }
}
