package dev.quarry.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The part of kustomize that k8s/ uses, for the CI check: a Kustomization's {@code resources} and
 * {@code components}, and a Component's {@code resources} and strategic-merge {@code patches}.
 * kustomize is not packaged for Debian 12 (and its kubectl has a kustomize too old for components),
 * so the test renders with this; any field outside this subset fails the render, which keeps k8s/
 * inside what is checked.
 *
 * <p>A patch merges into its target as kustomize's strategic merge does, as far as this knows it:
 * maps key by key; a {@code null} removes the key; the lists the Kubernetes schema merges item by
 * item are merged by their merge key ({@link #MERGED}: containers, volumes and env by {@code name},
 * volumeMounts by {@code mountPath}, container ports by {@code containerPort}, a Service's ports by
 * {@code port}…), the patch's items first in its order, then the target's other items in theirs;
 * a few lists the schema replaces whole ({@link #REPLACED}) are replaced. A patch that sets a list
 * the target does not have just sets it. A patch that touches any other list of its target, uses a
 * {@code $} directive, or gives a keyed list an item without its key (or a key twice) fails the
 * render with a message naming the list: the result would be a guess. {@code K8sManifestsTest}
 * compares every render with {@code kubectl kustomize} where that is installed.
 */
final class Kustomize {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final Set<String> KUSTOMIZATION_FIELDS = Set.of("apiVersion", "kind", "resources", "components");
  private static final Set<String> COMPONENT_FIELDS = Set.of("apiVersion", "kind", "resources", "patches");

  private Kustomize() {}

  /** The objects of {@code dir}'s kustomization with the given component directories added. */
  static List<ObjectNode> render(Path dir, List<Path> extraComponents) throws IOException {
    JsonNode k = readOne(dir.resolve("kustomization.yaml"));
    expect(k, "kustomize.config.k8s.io/v1beta1", "Kustomization", KUSTOMIZATION_FIELDS, dir);
    List<ObjectNode> objects = new ArrayList<>();
    for (JsonNode resource : k.path("resources")) {
      objects.addAll(resource(dir.resolve(resource.asText())));
    }
    List<Path> components = new ArrayList<>();
    k.path("components").forEach(c -> components.add(dir.resolve(c.asText())));
    components.addAll(extraComponents);
    for (Path component : components) {
      applyComponent(component.normalize(), objects);
    }
    return objects;
  }

  private static void applyComponent(Path dir, List<ObjectNode> objects) throws IOException {
    JsonNode c = readOne(dir.resolve("kustomization.yaml"));
    expect(c, "kustomize.config.k8s.io/v1alpha1", "Component", COMPONENT_FIELDS, dir);
    for (JsonNode resource : c.path("resources")) {
      for (ObjectNode added : resource(dir.resolve(resource.asText()))) {
        if (find(objects, added) != null) {
          throw new IllegalStateException(dir + ": " + id(added) + " is already defined");
        }
        objects.add(added);
      }
    }
    for (JsonNode patch : c.path("patches")) {
      if (patch.size() != 1 || !patch.has("path")) {
        throw new IllegalStateException(dir + ": only patches with a path are supported, got " + patch);
      }
      for (ObjectNode p : readAll(dir.resolve(patch.path("path").asText()))) {
        ObjectNode target = find(objects, p);
        if (target == null) {
          throw new IllegalStateException(dir + ": patch target " + id(p) + " does not exist");
        }
        try {
          merge(target, p, target.path("kind").asText());
        } catch (Unmergeable e) {
          throw new Unmergeable(dir.resolve(patch.path("path").asText()) + ", patch of " + id(p) + ": " + e.getMessage());
        }
      }
    }
  }

  private static List<ObjectNode> resource(Path path) throws IOException {
    if (Files.isDirectory(path)) {
      return render(path, List.of());
    }
    return readAll(path);
  }

  /** Where an object kind keeps its pod spec, for the lists of pod specs and containers below. */
  private static final Map<String, String> POD_SPEC = Map.of(
      "Deployment", "spec.template.spec", "StatefulSet", "spec.template.spec", "DaemonSet", "spec.template.spec",
      "ReplicaSet", "spec.template.spec", "Job", "spec.template.spec", "CronJob", "spec.jobTemplate.spec.template.spec",
      "Pod", "spec");
  private static final Set<String> CONTAINER_LISTS = Set.of("containers", "initContainers", "ephemeralContainers");

  /** Lists that strategic merge merges item by item, with the field that names an item (the schema's patch merge key). */
  static final Map<String, String> MERGED = Map.ofEntries(
      Map.entry("pod:containers", "name"), Map.entry("pod:initContainers", "name"),
      Map.entry("pod:ephemeralContainers", "name"), Map.entry("pod:volumes", "name"),
      Map.entry("pod:imagePullSecrets", "name"), Map.entry("pod:hostAliases", "ip"),
      Map.entry("container:env", "name"), Map.entry("container:volumeMounts", "mountPath"),
      Map.entry("container:ports", "containerPort"), Map.entry("container:volumeDevices", "devicePath"),
      Map.entry("Service:spec.ports", "port"));

  /** Lists that strategic merge replaces whole (no merge strategy in the schema), checked against kustomize. */
  static final Set<String> REPLACED = Set.of("container:args", "container:command", "pod:tolerations");

  /** Strategic merge of {@code patch} into {@code target}, an object of {@code kind}; refuses what it would guess. */
  static void merge(ObjectNode target, JsonNode patch, String kind) {
    merge(target, patch, kind, "");
  }

  private static void merge(ObjectNode target, JsonNode patch, String kind, String path) {
    for (Iterator<Map.Entry<String, JsonNode>> it = patch.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      String field = path.isEmpty() ? e.getKey() : path + "." + e.getKey();
      if (e.getKey().startsWith("$")) {
        throw new Unmergeable(field + ": the directive " + e.getKey() + " is not supported by the check's renderer");
      }
      JsonNode existing = target.get(e.getKey());
      JsonNode value = e.getValue();
      if (value.isNull()) {
        target.remove(e.getKey());
      } else if (existing instanceof ObjectNode o && value.isObject()) {
        merge(o, value, kind, field);
      } else if (existing instanceof ArrayNode a && value.isArray()) {
        String list = listKind(kind, field);
        String key = list == null ? null : MERGED.get(list);
        if (key != null) {
          target.set(e.getKey(), mergeList(a, (ArrayNode) value, key, kind, field));
        } else if (list != null && REPLACED.contains(list)) {
          target.set(e.getKey(), value.deepCopy());
        } else {
          throw new Unmergeable(field + " of " + kind + ": the patch changes a list the check's renderer does not know"
              + " how kustomize merges (it knows " + new java.util.TreeSet<>(MERGED.keySet()) + " by their keys and replaces "
              + new java.util.TreeSet<>(REPLACED) + "); add kustomize's rule for it to Kustomize.java, checked against kubectl kustomize");
        }
      } else {
        target.set(e.getKey(), value.deepCopy());
      }
    }
  }

  /** The patch's items first, merged into the target's item of the same key, then the target's other items. */
  private static ArrayNode mergeList(ArrayNode target, ArrayNode patch, String key, String kind, String path) {
    ArrayNode merged = target.arrayNode();
    Set<JsonNode> patched = new java.util.HashSet<>();
    keys(target, key, path + " of the target");
    for (JsonNode item : keys(patch, key, path + " of the patch")) {
      ObjectNode match = null;
      for (JsonNode old : target) {
        if (old.get(key).equals(item.get(key))) {
          match = (ObjectNode) old.deepCopy();
        }
      }
      if (match == null) {
        merged.add(item.deepCopy());
      } else {
        merge(match, item, kind, path + "[]");
        merged.add(match);
      }
      patched.add(item.get(key));
    }
    for (JsonNode old : target) {
      if (!patched.contains(old.get(key))) {
        merged.add(old.deepCopy());
      }
    }
    return merged;
  }

  /** The list itself, once each of its items is a map with the key, no two alike. */
  private static ArrayNode keys(ArrayNode list, String key, String where) {
    Set<JsonNode> seen = new java.util.HashSet<>();
    for (JsonNode item : list) {
      if (!item.isObject() || !item.hasNonNull(key)) {
        throw new Unmergeable(where + ": an item without its merge key '" + key + "': " + item);
      }
      if (!seen.add(item.get(key))) {
        throw new Unmergeable(where + ": two items with " + key + " " + item.get(key));
      }
    }
    return list;
  }

  /**
   * The rule name of the list at {@code path} of an object of {@code kind} ("pod:volumes",
   * "container:env", "Service:spec.ports"), or null for a list this knows nothing of.
   */
  private static String listKind(String kind, String path) {
    String pod = POD_SPEC.get(kind);
    if (pod != null && path.startsWith(pod + ".")) {
      String rest = path.substring(pod.length() + 1);
      int item = rest.indexOf("[].");
      if (item < 0) {
        return "pod:" + rest;
      }
      if (CONTAINER_LISTS.contains(rest.substring(0, item)) && rest.indexOf('.', item + 3) < 0) {
        return "container:" + rest.substring(item + 3);
      }
      return null;
    }
    return kind + ":" + path;
  }

  /** A patch the renderer would have to guess at. */
  static final class Unmergeable extends IllegalStateException {
    Unmergeable(String message) {
      super(message);
    }
  }

  static String id(JsonNode o) {
    return o.path("kind").asText() + "/" + o.path("metadata").path("name").asText();
  }

  private static ObjectNode find(List<ObjectNode> objects, JsonNode like) {
    for (ObjectNode o : objects) {
      if (id(o).equals(id(like))) {
        return o;
      }
    }
    return null;
  }

  private static void expect(JsonNode k, String apiVersion, String kind, Set<String> fields, Path dir) {
    if (!apiVersion.equals(k.path("apiVersion").asText()) || !kind.equals(k.path("kind").asText())) {
      throw new IllegalStateException(dir + ": expected a " + kind + " (" + apiVersion + ")");
    }
    k.fieldNames().forEachRemaining(f -> {
      if (!fields.contains(f)) {
        throw new IllegalStateException(dir + ": field '" + f + "' is not supported by the check's renderer");
      }
    });
  }

  private static JsonNode readOne(Path file) throws IOException {
    List<ObjectNode> all = readAll(file);
    if (all.size() != 1) {
      throw new IllegalStateException(file + ": expected one document");
    }
    return all.get(0);
  }

  /** Every document of a YAML file, each of which must be a mapping. */
  static List<ObjectNode> readAll(Path file) throws IOException {
    List<ObjectNode> docs = new ArrayList<>();
    try (YAMLParser parser = (YAMLParser) YAML.getFactory().createParser(file.toFile())) {
      Iterator<JsonNode> it = YAML.readValues(parser, JsonNode.class);
      while (it.hasNext()) {
        JsonNode doc = it.next();
        if (doc == null || doc.isNull() || doc.isMissingNode()) {
          continue;
        }
        if (!(doc instanceof ObjectNode o)) {
          throw new IllegalStateException(file + ": a document is not a mapping");
        }
        docs.add(o);
      }
    }
    return docs;
  }
}
