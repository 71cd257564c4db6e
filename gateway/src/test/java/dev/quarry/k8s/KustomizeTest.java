package dev.quarry.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayName("The check's kustomize renderer merges patches as kustomize does, and refuses what it would guess")
class KustomizeTest {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  private static final String BASE = """
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: x}
      spec:
        template:
          spec:
            containers:
              - name: a
                image: i
                args: [one, two]
                envFrom: [{configMapRef: {name: c}}]
                env: [{name: A, value: "1"}, {name: B, value: "2"}, {name: C, value: "3"}]
                ports: [{name: http, containerPort: 80}]
                volumeMounts: [{name: v1, mountPath: /a}, {name: v2, mountPath: /b}]
            volumes: [{name: v1, emptyDir: {}}, {name: v2, emptyDir: {}}, {name: v3, emptyDir: {}}]
            tolerations: [{key: k1}]
            readinessGates: [{conditionType: ready}]
      ---
      apiVersion: v1
      kind: Service
      metadata: {name: x}
      spec:
        ports: [{name: http, port: 80, targetPort: 8080}, {name: grpc, port: 90}]
      """;

  // Each list of kustomize's rules: by name, by mountPath (v2's new path is a new mount; /b is
  // v3's now), by containerPort (the same port renamed), by a Service's port; args and
  // tolerations replaced; a null removes.
  private static final String PATCH = """
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: x}
      spec:
        template:
          spec:
            containers:
              - name: b
                image: j
              - name: a
                args: [three]
                env: [{name: C, value: "9"}, {name: D, value: "4"}]
                ports: [{name: metrics, containerPort: 80}]
                volumeMounts: [{name: v3, mountPath: /b}, {name: v2, mountPath: /c}]
            volumes: [{name: v4, emptyDir: {}}, {name: v2, emptyDir: {medium: Memory}}]
            tolerations: [{key: k2}]
            securityContext: null
      ---
      apiVersion: v1
      kind: Service
      metadata: {name: x}
      spec:
        ports: [{name: grpc2, port: 90}]
      """;

  // What kubectl kustomize (kustomize v5.5.0) renders from these: the patch's items first, in its
  // order, then the target's others in theirs.
  private static final String EXPECTED = """
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: x}
      spec:
        template:
          spec:
            containers:
              - name: b
                image: j
              - name: a
                image: i
                args: [three]
                envFrom: [{configMapRef: {name: c}}]
                env: [{name: C, value: "9"}, {name: D, value: "4"}, {name: A, value: "1"}, {name: B, value: "2"}]
                ports: [{name: metrics, containerPort: 80}]
                volumeMounts: [{name: v3, mountPath: /b}, {name: v2, mountPath: /c}, {name: v1, mountPath: /a}]
            volumes: [{name: v4, emptyDir: {}}, {name: v2, emptyDir: {medium: Memory}}, {name: v1, emptyDir: {}}, {name: v3, emptyDir: {}}]
            tolerations: [{key: k2}]
            readinessGates: [{conditionType: ready}]
      ---
      apiVersion: v1
      kind: Service
      metadata: {name: x}
      spec:
        ports: [{name: grpc2, port: 90}, {name: http, port: 80, targetPort: 8080}]
      """;

  @Test
  @DisplayName("lists merge by kustomize's keys (volumeMounts by mountPath, ports by containerPort and port, the rest by name), in kustomize's order")
  void mergesByKustomizesKeys(@TempDir Path dir) throws Exception {
    Path overlay = fixture(dir, PATCH);
    List<ObjectNode> rendered = Kustomize.render(overlay, List.of());
    assertThat(byId(rendered)).isEqualTo(byId(parse(EXPECTED)));
    kubectl(overlay).ifPresent(real -> assertThat(byId(rendered)).as("kubectl kustomize").isEqualTo(byId(real)));
  }

  @Test
  @DisplayName("a patch touching a list it does not know, a $ directive, or an item without its merge key fails, naming the list")
  void refusesWhatItWouldGuess(@TempDir Path dir) throws Exception {
    String deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  template:\n    spec:\n";
    assertThatThrownBy(() -> Kustomize.render(fixture(dir.resolve("1"), deployment
        + "      containers: [{name: a, envFrom: [{configMapRef: {name: other}}]}]\n"), List.of()))
        .isInstanceOf(Kustomize.Unmergeable.class)
        .hasMessageContaining("spec.template.spec.containers[].envFrom of Deployment")
        .hasMessageContaining("does not know how kustomize merges");
    assertThatThrownBy(() -> Kustomize.render(fixture(dir.resolve("2"), deployment
        + "      volumes: [{name: v1, projected: {sources: []}}]\n      readinessGates: [{conditionType: x}]\n"), List.of()))
        .hasMessageContaining("fixture.yaml, patch of Deployment/x")
        .hasMessageContaining("spec.template.spec.readinessGates of Deployment");
    assertThatThrownBy(() -> Kustomize.render(fixture(dir.resolve("3"), deployment
        + "      containers: [{name: a, $patch: delete}]\n"), List.of()))
        .hasMessageContaining("the directive $patch");
    assertThatThrownBy(() -> Kustomize.render(fixture(dir.resolve("4"), deployment
        + "      containers: [{name: a, volumeMounts: [{name: v9}]}]\n"), List.of()))
        .hasMessageContaining("without its merge key 'mountPath'");
    assertThatThrownBy(() -> Kustomize.render(fixture(dir.resolve("5"),
        "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec:\n  ports: [{port: 90}, {port: 90, protocol: UDP}]\n"), List.of()))
        .hasMessageContaining("two items with port 90");
  }

  @Test
  @DisplayName("every layout of k8s/ renders exactly as kubectl kustomize renders it (where kubectl with kustomize is installed)")
  void layoutsAgreeWithKubectl(@TempDir Path dir) throws Exception {
    Assumptions.assumeTrue(kubectlAvailable(), "no kubectl with a kustomize that knows components on this machine");
    for (List<Path> layout : Manifests.layouts()) {
      Path overlay = Files.createDirectories(dir.resolve("layout" + Manifests.layouts().indexOf(layout)));
      String components = layout.stream().map(c -> overlay.relativize(c).toString()).collect(Collectors.joining(", "));
      Files.writeString(overlay.resolve("kustomization.yaml"), "apiVersion: kustomize.config.k8s.io/v1beta1\n"
          + "kind: Kustomization\nresources: [" + overlay.relativize(Manifests.K8S.resolve("base")) + "]\n"
          + "components: [" + components + "]\n");
      assertThat(byId(Manifests.render(layout))).as(Manifests.name(layout))
          .isEqualTo(byId(kubectl(overlay).orElseThrow()));
    }
  }

  /** A base with {@link #BASE}, and an overlay whose component patches it with {@code patch}. */
  private static Path fixture(Path dir, String patch) throws IOException {
    Files.createDirectories(dir.resolve("base"));
    Files.createDirectories(dir.resolve("component"));
    Files.createDirectories(dir.resolve("overlay"));
    Files.writeString(dir.resolve("base/objects.yaml"), BASE);
    Files.writeString(dir.resolve("base/kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [objects.yaml]\n");
    Files.writeString(dir.resolve("component/fixture.yaml"), patch);
    Files.writeString(dir.resolve("component/kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches: [{path: fixture.yaml}]\n");
    Files.writeString(dir.resolve("overlay/kustomization.yaml"), "apiVersion: kustomize.config.k8s.io/v1beta1\n"
        + "kind: Kustomization\nresources: [../base]\ncomponents: [../component]\n");
    return dir.resolve("overlay");
  }

  private static Map<String, JsonNode> byId(List<ObjectNode> objects) {
    Map<String, JsonNode> byId = new TreeMap<>();
    objects.forEach(o -> byId.put(Kustomize.id(o), o));
    return byId;
  }

  private static List<ObjectNode> parse(String yaml) throws IOException {
    Path file = Files.createTempFile("kustomize-test", ".yaml");
    try {
      Files.writeString(file, yaml);
      return Kustomize.readAll(file);
    } finally {
      Files.delete(file);
    }
  }

  private static boolean kubectlAvailable() {
    try {
      Process p = new ProcessBuilder("kubectl", "version", "--client").redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      // Components came with kustomize v3.7; the kubectl of Debian 12 bundles an older one.
      return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0 && out.matches("(?s).*Kustomize Version: v[5-9].*");
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** kubectl kustomize's render of {@code dir}, when kubectl is installed. */
  private static java.util.Optional<List<ObjectNode>> kubectl(Path dir) throws IOException, InterruptedException {
    if (!kubectlAvailable()) {
      return java.util.Optional.empty();
    }
    Process p = new ProcessBuilder("kubectl", "kustomize", dir.toString())
        .redirectError(ProcessBuilder.Redirect.DISCARD).directory(new File("/")).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("kubectl kustomize " + dir).isZero();
    List<ObjectNode> objects = new ArrayList<>(parse(out));
    return java.util.Optional.of(objects);
  }
}
