package dev.quarry.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/** The rendered layouts of k8s/ and what their containers are given, for the checks of this package. */
final class Manifests {
  static final Path ROOT = repoRoot();
  static final Path K8S = ROOT.resolve("k8s");
  /** How {@link #environment} shows a value that comes from a Secret: the Secret's name and key follow. */
  static final String SECRET = "secret:";

  private Manifests() {}

  /** Every layout: the base with each combination of components. */
  static List<List<Path>> layouts() throws IOException {
    List<Path> components;
    try (Stream<Path> dirs = Files.list(K8S.resolve("components"))) {
      components = dirs.filter(Files::isDirectory).sorted().toList();
    }
    List<List<Path>> layouts = new ArrayList<>();
    for (int mask = 0; mask < 1 << components.size(); mask++) {
      List<Path> chosen = new ArrayList<>();
      for (int i = 0; i < components.size(); i++) {
        if ((mask & 1 << i) != 0) {
          chosen.add(components.get(i));
        }
      }
      layouts.add(chosen);
    }
    return layouts;
  }

  static String name(List<Path> components) {
    return "base + " + components.stream().map(p -> p.getFileName().toString()).toList();
  }

  static List<ObjectNode> render(List<Path> components) throws IOException {
    return Kustomize.render(K8S.resolve("base"), components);
  }

  /**
   * A container's environment as the kubelet builds it: the ConfigMaps of {@code envFrom}, then
   * {@code env} (literal values and ConfigMap keys resolved). A Secret's value is shown as
   * {@code secret:NAME/KEY}, with a {@code ?} after it when the reference is optional; values from
   * the downward API are left out. A reference to a ConfigMap or key the render lacks fails.
   */
  static Map<String, String> environment(List<ObjectNode> objects, JsonNode container) {
    Map<String, String> env = new LinkedHashMap<>();
    for (JsonNode from : container.path("envFrom")) {
      if (!from.has("configMapRef")) {
        throw new AssertionError(container.path("name").asText() + ": envFrom " + from
            + ": only ConfigMaps, so that every secret the container gets is named one by one");
      }
      data(objects, from.path("configMapRef").path("name").asText()).fields()
          .forEachRemaining(e -> env.put(e.getKey(), e.getValue().asText()));
    }
    for (JsonNode e : container.path("env")) {
      String name = e.path("name").asText();
      JsonNode from = e.path("valueFrom");
      if (e.has("value")) {
        env.put(name, e.path("value").asText());
      } else if (from.has("secretKeyRef")) {
        JsonNode ref = from.path("secretKeyRef");
        env.put(name, SECRET + ref.path("name").asText() + "/" + ref.path("key").asText()
            + (ref.path("optional").asBoolean(false) ? "?" : ""));
      } else if (from.has("configMapKeyRef")) {
        JsonNode ref = from.path("configMapKeyRef");
        JsonNode value = data(objects, ref.path("name").asText()).get(ref.path("key").asText());
        if (value == null) {
          throw new AssertionError(name + ": ConfigMap " + ref.path("name").asText() + " has no key " + ref.path("key").asText());
        }
        env.put(name, value.asText());
      } else if (!from.has("fieldRef")) {
        throw new AssertionError(name + ": a source the check does not know: " + e);
      }
    }
    return env;
  }

  static JsonNode data(List<ObjectNode> objects, String configMap) {
    return get(objects, "ConfigMap/" + configMap).path("data");
  }

  static JsonNode podSpec(JsonNode workload) {
    return workload.path("spec").path("template").path("spec");
  }

  static JsonNode container(JsonNode podSpec, String name) {
    for (JsonNode c : podSpec.path("containers")) {
      if (c.path("name").asText().equals(name)) {
        return c;
      }
    }
    throw new AssertionError("no container " + name);
  }

  static ObjectNode find(List<ObjectNode> objects, String id) {
    return objects.stream().filter(o -> Kustomize.id(o).equals(id)).findFirst().orElse(null);
  }

  static ObjectNode get(List<ObjectNode> objects, String id) {
    ObjectNode o = find(objects, id);
    if (o == null) {
      throw new AssertionError("the render has no " + id);
    }
    return o;
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
