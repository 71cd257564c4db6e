package dev.quarry.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Reads a manifest into the Kubernetes object model (fabric8) and fails on any field the model does
 * not know: fabric8 keeps unknown fields in each object's additionalProperties instead of failing,
 * so those are walked and must all be empty. Custom resources get a small schema of their own.
 */
final class StrictModel {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The fields a ServiceMonitor may have here: null is any value, a map an object, a list a list of such objects. */
  private static final Map<String, Object> SERVICE_MONITOR = Map.of(
      "apiVersion", "monitoring.coreos.com/v1", "kind", "ServiceMonitor",
      "metadata", Map.of("name", "", "namespace", "", "labels", "", "annotations", ""),
      "spec", Map.of(
          "selector", Map.of("matchLabels", "", "matchExpressions", ""),
          "namespaceSelector", Map.of("any", "", "matchNames", ""),
          "jobLabel", "",
          "endpoints", List.of(Map.of("port", "", "path", "", "interval", "", "scrapeTimeout", "",
              "scheme", "", "honorLabels", ""))));

  private StrictModel() {}

  /** Problems found, as "path: problem" lines; empty when the manifest is clean. */
  static List<String> check(JsonNode manifest) {
    List<String> problems = new ArrayList<>();
    String apiVersion = manifest.path("apiVersion").asText();
    if (apiVersion.startsWith("monitoring.coreos.com/")) {
      if (!"ServiceMonitor".equals(manifest.path("kind").asText()) || !"monitoring.coreos.com/v1".equals(apiVersion)) {
        problems.add(Kustomize.id(manifest) + ": no schema for this custom resource");
      } else {
        schema(manifest, SERVICE_MONITOR, Kustomize.id(manifest), problems);
      }
      return problems;
    }
    KubernetesResource resource;
    try {
      resource = JSON.treeToValue(manifest, KubernetesResource.class);
    } catch (java.io.IOException | RuntimeException e) {
      problems.add(Kustomize.id(manifest) + ": " + e.getMessage().lines().findFirst().orElse(""));
      return problems;
    }
    if (resource == null || resource.getClass().getName().contains("GenericKubernetesResource")) {
      problems.add(Kustomize.id(manifest) + ": " + apiVersion + " " + manifest.path("kind").asText()
          + " is not a kind of the Kubernetes object model");
      return problems;
    }
    walk(resource, Kustomize.id(manifest), problems);
    return problems;
  }

  private static void walk(Object o, String path, List<String> problems) {
    if (o == null || o instanceof String || o instanceof Number || o instanceof Boolean || o instanceof Enum<?>) {
      return;
    }
    if (o instanceof Map<?, ?> map) {
      map.forEach((k, v) -> walk(v, path + "." + k, problems));
      return;
    }
    if (o instanceof Collection<?> items) {
      int i = 0;
      for (Object item : items) {
        walk(item, path + "[" + i++ + "]", problems);
      }
      return;
    }
    if (!o.getClass().getName().startsWith("io.fabric8.")) {
      return;
    }
    for (Method m : o.getClass().getMethods()) {
      if (m.getParameterCount() != 0 || Modifier.isStatic(m.getModifiers()) || !m.getName().startsWith("get")
          || m.getDeclaringClass() == Object.class) {
        continue;
      }
      Object value;
      try {
        value = m.invoke(o);
      } catch (IllegalAccessException | InvocationTargetException e) {
        continue;
      }
      if (m.getName().equals("getAdditionalProperties")) {
        if (value instanceof Map<?, ?> extra && !extra.isEmpty()) {
          problems.add(path + ": unknown field(s) " + extra.keySet());
        }
      } else {
        walk(value, path + "." + property(m.getName()), problems);
      }
    }
  }

  private static String property(String getter) {
    return Character.toLowerCase(getter.charAt(3)) + getter.substring(4);
  }

  @SuppressWarnings("unchecked")
  private static void schema(JsonNode node, Object schema, String path, List<String> problems) {
    if (schema instanceof Map<?, ?> fields) {
      if (!node.isObject()) {
        problems.add(path + ": expected an object");
        return;
      }
      for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
        String f = it.next();
        if (!fields.containsKey(f)) {
          problems.add(path + ": unknown field [" + f + "]");
        } else {
          schema(node.get(f), fields.get(f), path + "." + f, problems);
        }
      }
    } else if (schema instanceof List<?> items) {
      if (!node.isArray()) {
        problems.add(path + ": expected a list");
        return;
      }
      for (int i = 0; i < node.size(); i++) {
        schema(node.get(i), items.get(0), path + "[" + i + "]", problems);
      }
    } else if (schema instanceof String fixed && !fixed.isEmpty() && !fixed.equals(node.asText())) {
      problems.add(path + ": must be " + fixed);
    }
  }
}
