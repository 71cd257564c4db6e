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
 * {@code components}, and a Component's {@code resources} and strategic-merge {@code patches}
 * (maps merged key by key, lists of named items merged by name, other lists replaced). No kustomize
 * binary is packaged for Debian 12 (and its kubectl has a kustomize too old for components), so the
 * test renders with this; any field outside this subset fails the render, which keeps k8s/ inside
 * what is checked.
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
        merge(target, p);
      }
    }
  }

  private static List<ObjectNode> resource(Path path) throws IOException {
    if (Files.isDirectory(path)) {
      return render(path, List.of());
    }
    return readAll(path);
  }

  /** Strategic merge, as far as k8s/ needs it. */
  static void merge(ObjectNode target, JsonNode patch) {
    for (Iterator<Map.Entry<String, JsonNode>> it = patch.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      JsonNode existing = target.get(e.getKey());
      JsonNode value = e.getValue();
      if (existing instanceof ObjectNode o && value.isObject()) {
        merge(o, value);
      } else if (existing instanceof ArrayNode a && value.isArray() && named(a) && named(value)) {
        for (JsonNode item : value) {
          ObjectNode match = null;
          for (JsonNode old : a) {
            if (old.path("name").equals(item.path("name"))) {
              match = (ObjectNode) old;
            }
          }
          if (match == null) {
            a.add(item.deepCopy());
          } else {
            merge(match, item);
          }
        }
      } else {
        target.set(e.getKey(), value.deepCopy());
      }
    }
  }

  private static boolean named(JsonNode array) {
    if (array.isEmpty()) {
      return false;
    }
    for (JsonNode item : array) {
      if (!item.isObject() || !item.has("name")) {
        return false;
      }
    }
    return true;
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
