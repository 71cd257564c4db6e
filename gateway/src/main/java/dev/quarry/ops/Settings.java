package dev.quarry.ops;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Reads typed settings from the one configuration map ({@link ConfigSource}: the optional file
 * under the environment) and remembers each one it was asked for, with its default and bounds, so
 * that the README's configuration table can be checked against the code.
 */
public final class Settings {
  /** One setting as the code defines it. */
  public record Definition(String name, String defaultValue, String bounds) {}

  private final Map<String, String> values;
  private final List<Definition> read = new ArrayList<>();

  public Settings(Map<String, String> values) {
    this.values = values;
  }

  /** Every setting read so far, in the order read. */
  public List<Definition> definitions() {
    return List.copyOf(read);
  }

  public String string(String name, String dflt) {
    read.add(new Definition(name, dflt, ""));
    return raw(name, dflt);
  }

  /** A string that must not be shown anywhere (passwords, keys): same reading, recorded as secret. */
  public String secret(String name, String dflt) {
    read.add(new Definition(name, dflt, "secret"));
    return raw(name, dflt);
  }

  public int integer(String name, int dflt, int min, int max) {
    read.add(new Definition(name, Integer.toString(dflt), min + "–" + max));
    String v = values.get(name);
    if (v == null || v.isBlank()) {
      return dflt;
    }
    try {
      int n = Integer.parseInt(v.trim());
      if (n < min || n > max) {
        throw new Config.InvalidSetting(name + "=" + v + " is out of bounds [" + min + ", " + max + "]");
      }
      return n;
    } catch (NumberFormatException e) {
      throw new Config.InvalidSetting(name + "=" + v + " is not an integer");
    }
  }

  public Duration seconds(String name, int dflt, int min, int max) {
    return Duration.ofSeconds(integer(name, dflt, min, max));
  }

  public boolean bool(String name, boolean dflt) {
    read.add(new Definition(name, Boolean.toString(dflt), "true, false"));
    String v = raw(name, Boolean.toString(dflt)).toLowerCase(java.util.Locale.ROOT);
    return switch (v) {
      case "true" -> true;
      case "false" -> false;
      default -> throw new Config.InvalidSetting(name + "=" + v + " must be true or false");
    };
  }

  public String oneOf(String name, String dflt, String... allowed) {
    read.add(new Definition(name, dflt, String.join(", ", allowed)));
    String v = raw(name, dflt);
    for (String a : allowed) {
      if (a.equals(v)) {
        return v;
      }
    }
    throw new Config.InvalidSetting(name + "=" + v + " must be one of " + String.join(", ", allowed));
  }

  private String raw(String name, String dflt) {
    String v = values.get(name);
    return v == null || v.isBlank() ? dflt : v.trim();
  }
}
