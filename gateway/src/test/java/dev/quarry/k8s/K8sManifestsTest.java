package dev.quarry.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.quarry.config.Config;
import dev.quarry.gateway.OpsSettings;
import dev.quarry.telemetry.QuarryMetrics;
import dev.quarry.sandbox.SandboxSettings;
import io.fabric8.kubernetes.api.model.Quantity;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayName("k8s/: manifests parse strictly, every combination of components renders, and they agree with the code")
class K8sManifestsTest {
  private static final Path ROOT = repoRoot();
  private static final Path K8S = ROOT.resolve("k8s");
  private static final ObjectMapper MAPPER = new ObjectMapper();

  @Test
  @DisplayName("every manifest file, patches included, parses into the Kubernetes object model with no unknown field")
  void everyFileParsesStrictly() throws IOException {
    List<String> problems = new ArrayList<>();
    int checked = 0;
    for (Path file : yamlFiles()) {
      if (file.getFileName().toString().equals("kustomization.yaml")) {
        continue;
      }
      for (ObjectNode doc : Kustomize.readAll(file)) {
        problems.addAll(StrictModel.check(doc).stream().map(p -> K8S.relativize(file) + ": " + p).toList());
        checked++;
      }
    }
    assertThat(checked).isGreaterThanOrEqualTo(12);
    assertThat(problems).isEmpty();
  }

  @Test
  @DisplayName("the check fails on a misspelt field, an unknown kind, and a kustomization field it cannot render")
  void checkCanFail(@TempDir Path dir) throws IOException {
    ObjectNode deployment = (ObjectNode) MAPPER.readTree("""
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
         "spec": {"replica": 2, "template": {"spec": {"containers": [{"name": "a", "image": "b", "imagePullPolicy": "Always", "portz": []}]}}}}""");
    assertThat(StrictModel.check(deployment)).hasSize(2)
        .anyMatch(p -> p.contains("[replica]")).anyMatch(p -> p.contains("[portz]"));
    assertThat(StrictModel.check((ObjectNode) MAPPER.readTree("""
        {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "x"}}""")))
        .singleElement().asString().contains("not a kind");
    assertThat(StrictModel.check((ObjectNode) MAPPER.readTree("""
        {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor", "metadata": {"name": "x"},
         "spec": {"endpoints": [{"port": "http", "intervall": "15s"}]}}""")))
        .singleElement().asString().contains("[intervall]");
    Files.writeString(dir.resolve("kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamePrefix: x-\n");
    assertThatThrownBy(() -> Kustomize.render(dir, List.of())).hasMessageContaining("'namePrefix'");
  }

  @Test
  @DisplayName("the base renders with every combination of components, each object valid and every reference resolved")
  void everyCombinationRenders() throws IOException {
    List<Path> components;
    try (Stream<Path> dirs = Files.list(K8S.resolve("components"))) {
      components = dirs.filter(Files::isDirectory).sorted().toList();
    }
    assertThat(components).extracting(p -> p.getFileName().toString())
        .containsExactly("autoscaling", "ephemeral-volumes", "gvisor", "ingress", "postgres", "servicemonitor");
    for (int mask = 0; mask < 1 << components.size(); mask++) {
      List<Path> chosen = new ArrayList<>();
      for (int i = 0; i < components.size(); i++) {
        if ((mask & 1 << i) != 0) {
          chosen.add(components.get(i));
        }
      }
      String combination = "base + " + chosen.stream().map(p -> p.getFileName().toString()).toList();
      List<ObjectNode> objects = Kustomize.render(K8S.resolve("base"), chosen);
      List<String> problems = new ArrayList<>();
      Set<String> ids = new HashSet<>();
      for (ObjectNode o : objects) {
        problems.addAll(StrictModel.check(o));
        if (!ids.add(Kustomize.id(o))) {
          problems.add("duplicate " + Kustomize.id(o));
        }
      }
      problems.addAll(references(objects));
      assertThat(problems).as(combination).isEmpty();
    }
  }

  @Test
  @DisplayName("ports, image, user, settings and grace period agree with the code and the Dockerfile")
  void agreesWithCode() throws IOException {
    List<ObjectNode> objects = Kustomize.render(K8S.resolve("base"), List.of(K8S.resolve("components/autoscaling")));
    JsonNode pod = get(objects, "Deployment/quarry-gateway").path("spec").path("template").path("spec");
    JsonNode gateway = container(pod, "gateway");
    Map<String, String> settings = new HashMap<>();
    get(objects, "ConfigMap/quarry-config").path("data").fields()
        .forEachRemaining(e -> settings.put(e.getKey(), e.getValue().asText()));

    String dockerfile = Files.readString(ROOT.resolve("gateway/Dockerfile"));
    int defaultPort = Config.fromEnv(Map.of()).httpPort();
    assertThat(gateway.path("ports").get(0).path("containerPort").asInt()).isEqualTo(defaultPort);
    assertThat(dockerfile).contains("EXPOSE " + defaultPort + "\n");
    assertThat(Config.fromEnv(settings).httpPort()).isEqualTo(defaultPort);
    // The metrics port: the container's, the network policy's (admitted from one namespace only).
    int metricsPort = dev.quarry.gateway.GatewaySettings.read(settings).ops().metricsPort();
    assertThat(gateway.path("ports").findValuesAsText("name")).containsExactly("http", "metrics");
    assertThat(gateway.path("ports").get(1).path("containerPort").asInt()).isEqualTo(metricsPort);
    JsonNode ingress = get(objects, "NetworkPolicy/quarry-gateway").path("spec").path("ingress");
    for (JsonNode rule : ingress) {
      boolean metricsRule = rule.path("ports").findValuesAsText("port").contains(String.valueOf(metricsPort));
      assertThat(rule.path("from").isEmpty()).as("only the metrics rule names who may connect: " + rule)
          .isEqualTo(!metricsRule);
    }
    assertThat(gateway.path("image").asText()).startsWith("quarry-gateway:");
    assertThat(dockerfile).contains("-t quarry-gateway:");
    Matcher user = Pattern.compile("\nUSER (\\d+):(\\d+)\n").matcher(dockerfile);
    assertThat(user.find()).isTrue();
    assertThat(pod.path("securityContext").path("runAsUser").asText()).isEqualTo(user.group(1));
    assertThat(pod.path("securityContext").path("fsGroup").asText()).isEqualTo(user.group(2));
    assertThat(container(pod, "docker").path("args").toString()).contains("--group=" + user.group(2));

    // Every setting is one the README documents, and the gateway would start with them.
    String readme = Files.readString(ROOT.resolve("README.md"));
    assertThat(settings.keySet()).allSatisfy(k -> assertThat(readme).contains("| `" + k + "` |"));
    OpsSettings ops = dev.quarry.gateway.GatewaySettings.read(settings).ops();
    long margin = 30;
    assertThat(pod.path("terminationGracePeriodSeconds").asLong())
        .as("terminationGracePeriodSeconds leaves time after the drain grace")
        .isGreaterThanOrEqualTo(ops.drainGrace().toSeconds() + margin);

    // The engine resolves bind mounts on its own file system: shared directories at the same paths.
    JsonNode docker = container(pod, "docker");
    for (String dir : List.of(settings.get("QUARRY_DATA_DIR") + "/documents", settings.get("QUARRY_SANDBOX_RUN_DIR"),
        Path.of(settings.get("DOCKER_HOST").replace("unix://", "")).getParent().toString())) {
      assertThat(mountedVolume(gateway, dir)).as(dir + " in the gateway").isNotNull()
          .isEqualTo(mountedVolume(docker, dir));
    }

    // The autoscaler's metric is one the gateway exports.
    String metric = get(objects, "HorizontalPodAutoscaler/quarry-gateway").path("spec").path("metrics")
        .get(0).path("pods").path("metric").path("name").asText();
    assertThat(new QuarryMetrics().scrape()).contains("\n" + metric + " ");

    // The sandbox ceiling fits the engine's memory request, and the autoscaler acts below it.
    SandboxSettings sandboxes = SandboxSettings.fromEnv(settings);
    BigDecimal engineMemory = Quantity.getAmountInBytes(
        new Quantity(docker.path("resources").path("requests").path("memory").asText()));
    assertThat(BigDecimal.valueOf(sandboxes.maxActive()).multiply(BigDecimal.valueOf(sandboxes.limits().memoryBytes())))
        .as("QUARRY_SANDBOX_MAX_ACTIVE × QUARRY_SANDBOX_MEMORY_MIB within the engine's memory request")
        .isLessThanOrEqualTo(engineMemory);
    JsonNode target = get(objects, "HorizontalPodAutoscaler/quarry-gateway").path("spec").path("metrics")
        .get(0).path("pods").path("target").path("averageValue");
    assertThat(new BigDecimal(target.asText()))
        .as("the autoscaler's target of sandboxes in use per pod, under QUARRY_SANDBOX_MAX_ACTIVE")
        .isLessThan(BigDecimal.valueOf(sandboxes.maxActive()));
  }

  /** Selectors, ports and names that must point at something that exists in the rendered set. */
  private static List<String> references(List<ObjectNode> objects) {
    List<String> problems = new ArrayList<>();
    JsonNode deployment = get(objects, "Deployment/quarry-gateway");
    JsonNode podLabels = deployment.path("spec").path("template").path("metadata").path("labels");
    JsonNode podSpec = deployment.path("spec").path("template").path("spec");
    Set<String> portNames = new HashSet<>();
    podSpec.path("containers").forEach(c -> c.path("ports").forEach(p -> portNames.add(p.path("name").asText())));
    Set<String> volumes = new HashSet<>();
    podSpec.path("volumes").forEach(v -> volumes.add(v.path("name").asText()));
    for (JsonNode c : podSpec.path("containers")) {
      c.path("volumeMounts").forEach(m -> {
        if (!volumes.contains(m.path("name").asText())) {
          problems.add("container " + c.path("name").asText() + " mounts unknown volume " + m.path("name").asText());
        }
      });
      c.path("envFrom").forEach(e -> {
        if (e.has("configMapRef") && find(objects, "ConfigMap/" + e.path("configMapRef").path("name").asText()) == null) {
          problems.add("envFrom names a missing ConfigMap " + e.path("configMapRef").path("name").asText());
        }
      });
    }
    if (find(objects, "ServiceAccount/" + podSpec.path("serviceAccountName").asText()) == null) {
      problems.add("the Deployment's ServiceAccount is missing");
    }
    if (!deployment.path("spec").path("selector").path("matchLabels").equals(podLabels)) {
      problems.add("the Deployment's selector does not match its pod labels");
    }
    JsonNode service = get(objects, "Service/quarry-gateway");
    if (!matches(service.path("spec").path("selector"), podLabels)) {
      problems.add("the Service selects no gateway pod");
    }
    service.path("spec").path("ports").forEach(p -> {
      if (!portNames.contains(p.path("targetPort").asText())) {
        problems.add("the Service targets unknown port " + p.path("targetPort").asText());
      }
    });
    if (!matches(get(objects, "PodDisruptionBudget/quarry-gateway").path("spec").path("selector").path("matchLabels"), podLabels)) {
      problems.add("the PodDisruptionBudget selects no gateway pod");
    }
    if (!matches(get(objects, "NetworkPolicy/quarry-gateway").path("spec").path("podSelector").path("matchLabels"), podLabels)) {
      problems.add("the NetworkPolicy selects no gateway pod");
    }
    ObjectNode autoscaler = find(objects, "HorizontalPodAutoscaler/quarry-gateway");
    if (autoscaler != null) {
      JsonNode target = autoscaler.path("spec").path("scaleTargetRef");
      if (find(objects, target.path("kind").asText() + "/" + target.path("name").asText()) == null) {
        problems.add("the autoscaler targets a missing " + target);
      }
    }
    for (ObjectNode o : objects) {
      if (o.path("kind").asText().equals("Ingress")) {
        o.path("spec").path("rules").forEach(rule -> rule.path("http").path("paths").forEach(path -> {
          JsonNode backend = path.path("backend").path("service");
          ObjectNode target = find(objects, "Service/" + backend.path("name").asText());
          boolean port = target != null && target.path("spec").path("ports").findValuesAsText("name")
              .contains(backend.path("port").path("name").asText());
          if (!port) {
            problems.add(Kustomize.id(o) + " routes " + path.path("path").asText() + " to a missing Service port " + backend);
          }
        }));
      }
    }
    ObjectNode monitor = find(objects, "ServiceMonitor/quarry-gateway");
    if (monitor != null) {
      if (!matches(monitor.path("spec").path("selector").path("matchLabels"), service.path("metadata").path("labels"))) {
        problems.add("the ServiceMonitor selects no Service");
      }
      Set<String> servicePorts = new HashSet<>();
      service.path("spec").path("ports").forEach(p -> servicePorts.add(p.path("name").asText()));
      monitor.path("spec").path("endpoints").forEach(e -> {
        if (!servicePorts.contains(e.path("port").asText()) || !"/metrics".equals(e.path("path").asText())) {
          problems.add("the ServiceMonitor scrapes " + e + ", not the Service's /metrics");
        }
      });
    }
    String runtimeClass = podSpec.path("runtimeClassName").asText("");
    if (!runtimeClass.isEmpty() && find(objects, "RuntimeClass/" + runtimeClass) == null) {
      problems.add("the pod asks for a missing RuntimeClass " + runtimeClass);
    }
    ObjectNode postgres = find(objects, "Service/quarry-postgres");
    String pgHost = get(objects, "ConfigMap/quarry-config").path("data").path("QUARRY_PG_HOST").asText();
    if (postgres != null && !pgHost.equals("quarry-postgres")) {
      problems.add("with in-cluster PostgreSQL the gateway still points at " + pgHost);
    }
    // Every workload's ConfigMaps exist; in-cluster PostgreSQL admits the gateway and the roles Job.
    for (ObjectNode o : objects) {
      JsonNode spec = o.path("spec").path("template").path("spec");
      spec.path("volumes").forEach(v -> {
        if (v.has("configMap") && find(objects, "ConfigMap/" + v.path("configMap").path("name").asText()) == null) {
          problems.add(Kustomize.id(o) + " mounts a missing ConfigMap " + v.path("configMap").path("name").asText());
        }
      });
      spec.path("containers").forEach(c -> Manifests.environment(objects, c));
    }
    ObjectNode pgPolicy = find(objects, "NetworkPolicy/quarry-postgres");
    if (pgPolicy != null) {
      for (String client : List.of("Deployment/quarry-gateway", "Job/quarry-db-roles")) {
        JsonNode labels = get(objects, client).path("spec").path("template").path("metadata").path("labels");
        boolean admitted = false;
        for (JsonNode rule : pgPolicy.path("spec").path("ingress")) {
          for (JsonNode from : rule.path("from")) {
            admitted |= matches(from.path("podSelector").path("matchLabels"), labels);
          }
        }
        if (!admitted) {
          problems.add("the in-cluster PostgreSQL's NetworkPolicy shuts out " + client);
        }
      }
    }
    return problems;
  }

  private static boolean matches(JsonNode selector, JsonNode labels) {
    if (!selector.isObject() || selector.isEmpty()) {
      return false;
    }
    for (var it = selector.fields(); it.hasNext(); ) {
      var e = it.next();
      if (!e.getValue().equals(labels.path(e.getKey()))) {
        return false;
      }
    }
    return true;
  }

  private static String mountedVolume(JsonNode container, String path) {
    for (JsonNode m : container.path("volumeMounts")) {
      if (m.path("mountPath").asText().equals(path)) {
        return m.path("name").asText();
      }
    }
    return null;
  }

  private static JsonNode container(JsonNode podSpec, String name) {
    for (JsonNode c : podSpec.path("containers")) {
      if (c.path("name").asText().equals(name)) {
        return c;
      }
    }
    throw new AssertionError("no container " + name);
  }

  private static ObjectNode find(List<ObjectNode> objects, String id) {
    return objects.stream().filter(o -> Kustomize.id(o).equals(id)).findFirst().orElse(null);
  }

  private static ObjectNode get(List<ObjectNode> objects, String id) {
    ObjectNode o = find(objects, id);
    if (o == null) {
      throw new AssertionError("the render has no " + id);
    }
    return o;
  }

  private static List<Path> yamlFiles() throws IOException {
    try (Stream<Path> files = Files.walk(K8S)) {
      return files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList();
    }
  }

  private static Path repoRoot() {
    Path dir = Path.of("").toAbsolutePath();
    while (dir != null && !Files.isRegularFile(dir.resolve("quarry"))) {
      dir = dir.getParent();
    }
    if (dir == null) {
      throw new IllegalStateException("cannot find the repository root above " + Path.of("").toAbsolutePath());
    }
    return dir;
  }
}
