package dev.quarry.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Properties;

/**
 * The one configuration surface: environment variables, over an optional file named by
 * {@code QUARRY_CONFIG_FILE} (a {@code .properties} file or a flat {@code .yaml}/{@code .yml}
 * mapping), whose keys are the same variable names. The environment wins, so a deployment can keep
 * a file in a ConfigMap and override one value per pod.
 */
public final class ConfigSource {
  public static final String FILE_VARIABLE = "QUARRY_CONFIG_FILE";

  private ConfigSource() {}

  /** The merged settings; fails with {@link InvalidSetting} naming the file or key. */
  public static Map<String, String> load(Map<String, String> env) {
    String file = env.get(FILE_VARIABLE);
    if (file == null || file.isBlank()) {
      return env;
    }
    Map<String, String> merged = new HashMap<>(read(Path.of(file.trim())));
    merged.putAll(env);
    return Map.copyOf(merged);
  }

  static Map<String, String> read(Path file) {
    if (!Files.isRegularFile(file)) {
      throw new InvalidSetting(FILE_VARIABLE + "=" + file + ": no such file");
    }
    String name = file.getFileName().toString();
    try {
      Map<String, String> values;
      if (name.endsWith(".properties")) {
        values = properties(file);
      } else if (name.endsWith(".yaml") || name.endsWith(".yml")) {
        values = yaml(file);
      } else {
        throw new InvalidSetting(FILE_VARIABLE + "=" + file
            + ": the name must end in .properties, .yaml or .yml");
      }
      for (String key : values.keySet()) {
        if (!key.matches("[A-Z][A-Z0-9_]*")) {
          throw new InvalidSetting(FILE_VARIABLE + "=" + file + ": key '" + key
              + "' is not a setting name (settings are named like their variables, e.g. QUARRY_HTTP_PORT)");
        }
      }
      return values;
    } catch (IOException e) {
      throw new InvalidSetting(FILE_VARIABLE + "=" + file + ": cannot be read: "
          + e.getMessage().lines().findFirst().orElse(""));
    }
  }

  private static Map<String, String> properties(Path file) throws IOException {
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      p.load(r);
    }
    Map<String, String> values = new HashMap<>();
    p.stringPropertyNames().forEach(k -> values.put(k.trim(), p.getProperty(k)));
    return values;
  }

  private static Map<String, String> yaml(Path file) throws IOException {
    JsonNode root = new ObjectMapper(new YAMLFactory()).readTree(file.toFile());
    Map<String, String> values = new HashMap<>();
    if (root == null || root.isMissingNode() || root.isNull()) {
      return values;
    }
    if (!root.isObject()) {
      throw new InvalidSetting(FILE_VARIABLE + "=" + file + ": must be a mapping of setting names to values");
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      if (!e.getValue().isValueNode() || e.getValue().isNull()) {
        throw new InvalidSetting(FILE_VARIABLE + "=" + file + ": " + e.getKey()
            + " must be a single value (a string, number or boolean)");
      }
      values.put(e.getKey(), e.getValue().asText());
    }
    return values;
  }
}
