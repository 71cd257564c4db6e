package dev.quarry.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.quarry.agent.AgentSettings;
import dev.quarry.config.Config;
import dev.quarry.gateway.GatewaySettings;
import dev.quarry.sandbox.ImagePull;
import dev.quarry.sandbox.MountPrivacy;
import dev.quarry.sandbox.SandboxSettings;
import dev.quarry.telemetry.QuarryMetrics;
import io.fabric8.kubernetes.api.model.Quantity;
import java.io.IOException;
import java.math.BigDecimal;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the pod needs to work, in every layout of k8s/: volumes that keep mount privacy, memory
 * limits that hold what the containers put in memory, egress to the endpoints the settings name, the
 * registry's credentials, the autoscaler's metric pipeline and the ingress. {@code scripts/pod-check.py}
 * runs the pod these describe; this checks what a run on one machine cannot (every layout, the
 * adapter's query, the ingress' rules).
 */
@DisplayName("k8s/: the pod's volumes, memory, egress, registry credentials, metric pipeline and ingress")
class K8sPodSpecTest {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  /** What the gateway's JVM takes beyond its heap (metaspace, threads, direct buffers, the ONNX model). */
  private static final BigDecimal NON_HEAP = BigDecimal.valueOf(768L << 20);

  @Test
  @DisplayName("every layout: mount privacy required, and the documents, run and engine-storage volumes each a filesystem of its own at the same path in both containers")
  void mountPrivacyHolds() throws IOException {
    for (List<Path> layout : Manifests.layouts()) {
      List<ObjectNode> objects = Manifests.render(layout);
      JsonNode pod = Manifests.podSpec(Manifests.get(objects, "Deployment/quarry-gateway"));
      JsonNode gateway = Manifests.container(pod, "gateway");
      JsonNode docker = Manifests.container(pod, "docker");
      Map<String, String> env = Manifests.environment(objects, gateway);
      SandboxSettings sandboxes = SandboxSettings.fromEnv(env);
      String name = Manifests.name(layout);
      assertThat(sandboxes.mountPolicy()).as(name + ": QUARRY_SANDBOX_MOUNT_PRIVACY").isEqualTo(MountPrivacy.Policy.REQUIRE);
      String documents = Config.fromEnv(env).dataDir().resolve("documents").toString();
      String engineStorage = "/var/lib/docker";
      for (String dir : List.of(documents, sandboxes.runRoot().toString(), engineStorage)) {
        JsonNode volume = volumeMountedAt(pod, docker, dir);
        assertThat(volume).as(name + ": the engine mounts a volume at " + dir).isNotNull();
        assertThat(ownFilesystem(volume)).as(name + ": " + dir + " is a filesystem of its own (a Memory emptyDir"
            + " with a sizeLimit, or a generic ephemeral volume): " + volume).isTrue();
        if (!dir.equals(engineStorage)) {
          assertThat(volumeMountedAt(pod, gateway, dir)).as(name + ": the gateway mounts the same volume at " + dir)
              .isEqualTo(volume);
        }
      }
      // Upload files stay with the gateway: the engine (and so no sandbox) ever sees the data volume.
      String data = Config.fromEnv(env).dataDir().toString();
      assertThat(volumeMountedAt(pod, docker, data)).as(name + ": the engine mounts nothing at " + data).isNull();
    }
  }

  @Test
  @DisplayName("every layout: each container's memory limit holds what it keeps in memory (the gateway its fixed heap, 768 MiB and the Memory volumes it writes; the engine its sandboxes and image store)")
  void memoryHoldsTheVolumes() throws IOException {
    String dockerfile = Files.readString(Manifests.ROOT.resolve("gateway/Dockerfile"));
    // JAVA_TOOL_OPTIONS' -Xmx sets the heap whatever the image's -XX:MaxRAMPercentage says, unless the
    // image's command line sets one of its own.
    assertThat(dockerfile).doesNotContain("-Xmx").contains("-XX:MaxRAMPercentage");
    for (List<Path> layout : Manifests.layouts()) {
      List<ObjectNode> objects = Manifests.render(layout);
      JsonNode pod = Manifests.podSpec(Manifests.get(objects, "Deployment/quarry-gateway"));
      JsonNode gateway = Manifests.container(pod, "gateway");
      JsonNode docker = Manifests.container(pod, "docker");
      Map<String, String> env = Manifests.environment(objects, gateway);
      String name = Manifests.name(layout);
      Matcher xmx = Pattern.compile("-Xmx(\\d+)([mMgG])").matcher(env.getOrDefault("JAVA_TOOL_OPTIONS", ""));
      assertThat(xmx.find()).as(name + ": the gateway's heap is fixed (JAVA_TOOL_OPTIONS -Xmx)").isTrue();
      BigDecimal heap = BigDecimal.valueOf(Long.parseLong(xmx.group(1)) << (xmx.group(2).equalsIgnoreCase("g") ? 30 : 20));
      BigDecimal search = BigDecimal.valueOf((long) Config.fromEnv(env).searchMemoryMb() << 20);
      assertThat(search).as(name + ": QUARRY_SEARCH_MEMORY_MB within the heap").isLessThan(heap);
      assertThat(bytes(gateway, "limits")).as(name + ": the gateway's memory limit ≥ heap + 768 MiB + its Memory volumes")
          .isGreaterThanOrEqualTo(heap.add(NON_HEAP).add(memoryVolumes(pod, gateway, Set.of("dind-storage", "dind-socket"))));
      assertThat(bytes(gateway, "requests")).as(name + ": the gateway's memory request equals its limit")
          .isEqualTo(bytes(gateway, "limits"));
      SandboxSettings sandboxes = SandboxSettings.fromEnv(env);
      BigDecimal sandboxMemory = BigDecimal.valueOf(sandboxes.maxActive()).multiply(BigDecimal.valueOf(sandboxes.limits().memoryBytes()));
      assertThat(bytes(docker, "limits")).as(name + ": the engine's memory limit ≥ its sandboxes + its image store")
          .isGreaterThanOrEqualTo(sandboxMemory.add(memoryVolumes(pod, docker, Set.of("documents", "sandbox-run"))));
    }
  }

  @Test
  @DisplayName("every layout: the network policies let the pod reach PostgreSQL, DNS, the model endpoint, the embeddings endpoint and the sandbox image's registry, on their ports")
  void egressReachesWhatTheSettingsName() throws IOException {
    for (List<Path> layout : Manifests.layouts()) {
      List<ObjectNode> objects = Manifests.render(layout);
      JsonNode deployment = Manifests.get(objects, "Deployment/quarry-gateway");
      JsonNode labels = deployment.path("spec").path("template").path("metadata").path("labels");
      Map<String, String> env = Manifests.environment(objects, Manifests.container(Manifests.podSpec(deployment), "gateway"));
      Set<String> open = egressPorts(objects, labels);
      String name = Manifests.name(layout);
      Config config = Config.fromEnv(env);
      AgentSettings agent = GatewaySettings.read(env).agent();
      assertThat(agent.baseUrl()).as(name + ": a model endpoint is configured").isNotBlank();
      Map<String, Integer> needed = new java.util.LinkedHashMap<>();
      needed.put("PostgreSQL (QUARRY_PG_PORT)", config.pgPort());
      needed.put("DNS", 53);
      needed.put("the model (" + agent.baseUrl() + ")", port(agent.baseUrl()));
      String embeddings = env.getOrDefault("QUARRY_EMBEDDING_BASE_URL", "");
      if (!embeddings.isEmpty()) {
        needed.put("the embeddings (" + embeddings + ")", port(embeddings));
      }
      String registry = ImagePull.registry(SandboxSettings.fromEnv(env).image());
      needed.put("the sandbox image's registry (" + registry + ")", registry.contains(":")
          ? Integer.parseInt(registry.substring(registry.lastIndexOf(':') + 1)) : 443);
      needed.forEach((what, port) -> assertThat(open).as(name + ": egress to " + what).contains(String.valueOf(port)));
      // The servers Quarry is used with, on their usual ports: hosted APIs, vLLM, Ollama.
      for (String url : List.of("https://api.openai.com/v1", "http://vllm.models:8000/v1", "http://ollama.models:11434/v1")) {
        assertThat(open).as(name + ": egress to " + url).contains(String.valueOf(port(url)));
      }
    }
  }

  @Test
  @DisplayName("the registry's credentials: a dockerconfigjson Secret mounted where QUARRY_SANDBOX_REGISTRY_CONFIG says, in the gateway only, optional (anonymous pulls without it)")
  void registryCredentials() throws IOException {
    List<ObjectNode> objects = Manifests.render(List.of());
    JsonNode pod = Manifests.podSpec(Manifests.get(objects, "Deployment/quarry-gateway"));
    JsonNode gateway = Manifests.container(pod, "gateway");
    Map<String, String> env = Manifests.environment(objects, gateway);
    Path file = Path.of(env.get("QUARRY_SANDBOX_REGISTRY_CONFIG"));
    JsonNode volume = volumeMountedAt(pod, gateway, file.getParent().toString());
    assertThat(volume).as("a volume at " + file.getParent()).isNotNull();
    JsonNode secret = volume.path("secret");
    assertThat(secret.path("secretName").asText()).isEqualTo("quarry-sandbox-registry");
    assertThat(secret.path("optional").asBoolean()).isTrue();
    assertThat(secret.path("items").get(0).path("key").asText()).isEqualTo(".dockerconfigjson");
    assertThat(secret.path("items").get(0).path("path").asText()).isEqualTo(file.getFileName().toString());
    // Readable by the gateway's group only (fsGroup), and the engine never gets it.
    assertThat(secret.path("defaultMode").asInt()).isEqualTo(0440);
    for (JsonNode m : Manifests.container(pod, "docker").path("volumeMounts")) {
      assertThat(m.path("name").asText()).isNotEqualTo(volume.path("name").asText());
    }
    assertThat(ImagePull.registry(SandboxSettings.fromEnv(env).image())).as("the image names a registry")
        .isNotEqualTo("docker.io");
  }

  @Test
  @DisplayName("the metric pipeline: the adapter rule serves the HPA's metric per pod from a series the gateway exports, and its query, expanded as the adapter expands it, gives each pod's average under promtool")
  void metricPipeline(@TempDir Path dir) throws Exception {
    List<ObjectNode> objects = Manifests.render(List.of(Manifests.K8S.resolve("components/autoscaling")));
    JsonNode hpa = Manifests.get(objects, "HorizontalPodAutoscaler/quarry-gateway");
    String metric = hpa.path("spec").path("metrics").get(0).path("pods").path("metric").path("name").asText();
    ObjectNode adapter = Manifests.get(objects, "ConfigMap/quarry-prometheus-adapter");
    assertThat(adapter.path("metadata").path("namespace").asText()).isEqualTo("monitoring");
    JsonNode rules = YAML.readTree(adapter.path("data").path("config.yaml").asText()).path("rules");
    JsonNode rule = null;
    for (JsonNode r : rules) {
      if (metric.equals(r.path("name").path("as").asText())) {
        rule = r;
      }
    }
    assertThat(rule).as("an adapter rule serving " + metric).isNotNull();
    assertThat(rule.path("resources").path("overrides").path("namespace").path("resource").asText()).isEqualTo("namespace");
    assertThat(rule.path("resources").path("overrides").path("pod").path("resource").asText()).isEqualTo("pod");
    String series = rule.path("seriesQuery").asText().replaceAll("\\{.*", "");
    assertThat(new QuarryMetrics().scrape()).as("the gateway exports " + series).contains("\n" + series + " ");
    assertThat(series).matches(rule.path("name").path("matches").asText());

    // As the adapter runs it for the HPA: this namespace's pods, grouped by pod. gw-a's minute before
    // 2m averages 4 whether the range takes its left end (Prometheus 2) or not (Prometheus 3); what
    // came before it (9) and another namespace's pod of the same name (50) must not count.
    String query = rule.path("metricsQuery").asText().replace("<<.Series>>", series)
        .replace("<<.LabelMatchers>>", "namespace=\"quarry\",pod=~\"gw-a|gw-b\"").replace("<<.GroupBy>>", "pod");
    Path test = dir.resolve("adapter_test.yml");
    Files.writeString(test, """
        rule_files: []
        evaluation_interval: 15s
        tests:
          - interval: 15s
            input_series:
              - series: '%1$s{namespace="quarry",pod="gw-a",instance="10.0.0.1:9464"}'
                values: '9 9 9 9 4 2 6 3 5'
              - series: '%1$s{namespace="quarry",pod="gw-b",instance="10.0.0.2:9464"}'
                values: '1 1 1 1 1 1 1 1 1'
              - series: '%1$s{namespace="other",pod="gw-a",instance="10.0.1.1:9464"}'
                values: '50 50 50 50 50 50 50 50 50'
            promql_expr_test:
              - expr: '%2$s'
                eval_time: 2m
                exp_samples:
                  - labels: '{pod="gw-a"}'
                    value: 4
                  - labels: '{pod="gw-b"}'
                    value: 1
        """.formatted(series, query.replace("'", "''")));
    Process p = new ProcessBuilder("promtool", "test", "rules", test.toString()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(2, TimeUnit.MINUTES)).isTrue();
    assertThat(p.exitValue()).as("promtool test rules:\n" + out + "\n" + Files.readString(test)).isZero();
  }

  @Test
  @DisplayName("the ingress: / to the Service's http port, /mcp kept on one pod per API key, bodies up to the upload limit, streams unbuffered and held for a whole analysis")
  void ingress() throws IOException {
    List<ObjectNode> objects = Manifests.render(List.of(Manifests.K8S.resolve("components/ingress")));
    Map<String, String> env = Manifests.environment(objects,
        Manifests.container(Manifests.podSpec(Manifests.get(objects, "Deployment/quarry-gateway")), "gateway"));
    Config config = Config.fromEnv(env);
    AgentSettings agent = GatewaySettings.read(env).agent();
    Map<String, JsonNode> byPath = new HashMap<>();
    for (ObjectNode o : objects) {
      if (!o.path("kind").asText().equals("Ingress")) {
        continue;
      }
      for (JsonNode rule : o.path("spec").path("rules")) {
        for (JsonNode path : rule.path("http").path("paths")) {
          byPath.put(path.path("path").asText() + " " + path.path("pathType").asText(), o);
          assertThat(path.path("backend").path("service").path("name").asText()).isEqualTo("quarry-gateway");
          assertThat(path.path("backend").path("service").path("port").path("name").asText()).isEqualTo("http");
        }
      }
      JsonNode a = o.path("metadata").path("annotations");
      String prefix = "nginx.ingress.kubernetes.io/";
      assertThat(Quantity.getAmountInBytes(new Quantity(a.path(prefix + "proxy-body-size").asText().replace("m", "Mi"))))
          .as(Kustomize.id(o) + ": proxy-body-size holds QUARRY_MAX_UPLOAD_BYTES")
          .isGreaterThan(BigDecimal.valueOf(config.maxUploadBytes()));
      assertThat(a.path(prefix + "proxy-buffering").asText()).as(Kustomize.id(o) + ": server-sent events unbuffered")
          .isEqualTo("off");
      assertThat(Long.parseLong(a.path(prefix + "proxy-read-timeout").asText()))
          .as(Kustomize.id(o) + ": a POST /v1/analyses without a stream waits for the whole analysis (QUARRY_MAX_ANALYSIS_MS)")
          .isGreaterThanOrEqualTo(agent.maxBudgets().wallTimeMs() / 1000);
    }
    assertThat(byPath).containsOnlyKeys("/ Prefix", "/mcp Exact");
    assertThat(byPath.get("/mcp Exact").path("metadata").path("annotations")
        .path("nginx.ingress.kubernetes.io/upstream-hash-by").asText())
        .as("/mcp hashed on the API key, which an MCP session's first request carries too").isEqualTo("$http_authorization");
    assertThat(byPath.get("/ Prefix").path("metadata").path("annotations").has("nginx.ingress.kubernetes.io/upstream-hash-by"))
        .as("everything else on any replica").isFalse();
  }

  /** The ports the gateway pod may connect to: every NetworkPolicy that selects it, its Egress rules' ports. */
  private static Set<String> egressPorts(List<ObjectNode> objects, JsonNode podLabels) {
    Set<String> ports = new TreeSet<>();
    for (ObjectNode o : objects) {
      if (!o.path("kind").asText().equals("NetworkPolicy")) {
        continue;
      }
      boolean selects = true;
      for (var it = o.path("spec").path("podSelector").path("matchLabels").fields(); it.hasNext(); ) {
        var e = it.next();
        selects &= e.getValue().equals(podLabels.path(e.getKey()));
      }
      boolean egress = false;
      for (JsonNode t : o.path("spec").path("policyTypes")) {
        egress |= t.asText().equals("Egress");
      }
      if (selects && egress) {
        o.path("spec").path("egress").forEach(rule -> rule.path("ports").forEach(p -> ports.add(p.path("port").asText())));
      }
    }
    return ports;
  }

  private static int port(String url) {
    URI uri = URI.create(url);
    return uri.getPort() > 0 ? uri.getPort() : uri.getScheme().equals("https") ? 443 : 80;
  }

  /** The pod's volume that {@code container} mounts at {@code path}, or null. */
  private static JsonNode volumeMountedAt(JsonNode pod, JsonNode container, String path) {
    for (JsonNode m : container.path("volumeMounts")) {
      if (m.path("mountPath").asText().equals(path)) {
        for (JsonNode v : pod.path("volumes")) {
          if (v.path("name").asText().equals(m.path("name").asText())) {
            return v;
          }
        }
      }
    }
    return null;
  }

  /** A tmpfs of bounded size, or a volume the pod gets a filesystem of its own for. */
  private static boolean ownFilesystem(JsonNode volume) {
    JsonNode emptyDir = volume.path("emptyDir");
    if (volume.has("emptyDir")) {
      return "Memory".equals(emptyDir.path("medium").asText()) && emptyDir.has("sizeLimit");
    }
    return volume.has("ephemeral");
  }

  /** The sizeLimits of the Memory emptyDirs {@code container} mounts, but those named in {@code others} (written by the other container). */
  private static BigDecimal memoryVolumes(JsonNode pod, JsonNode container, Set<String> others) {
    BigDecimal sum = BigDecimal.ZERO;
    List<String> mounted = new ArrayList<>();
    container.path("volumeMounts").forEach(m -> mounted.add(m.path("name").asText()));
    for (JsonNode v : pod.path("volumes")) {
      String name = v.path("name").asText();
      if (mounted.contains(name) && !others.contains(name) && "Memory".equals(v.path("emptyDir").path("medium").asText())) {
        sum = sum.add(Quantity.getAmountInBytes(new Quantity(v.path("emptyDir").path("sizeLimit").asText())));
      }
    }
    return sum;
  }

  private static BigDecimal bytes(JsonNode container, String kind) {
    return Quantity.getAmountInBytes(new Quantity(container.path("resources").path(kind).path("memory").asText()));
  }
}
