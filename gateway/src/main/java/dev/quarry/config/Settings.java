package dev.quarry.config;

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

  /** A string whose allowed values {@code bounds} describes (checked by the caller). */
  public String string(String name, String dflt, String bounds) {
    read.add(new Definition(name, dflt, bounds));
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
        throw new InvalidSetting(name + "=" + v + " is out of bounds [" + min + ", " + max + "]");
      }
      return n;
    } catch (NumberFormatException e) {
      throw new InvalidSetting(name + "=" + v + " is not an integer");
    }
  }

  /**
   * An integer whose upper bound is another setting ({@code maxName}, already read as {@code max}):
   * recorded with that setting's name as its bound, as the README states it.
   */
  public int integerUpTo(String name, int dflt, int min, String maxName, int max) {
    int n = integer(name, dflt, min, Integer.MAX_VALUE);
    read.set(read.size() - 1, new Definition(name, Integer.toString(dflt), min + "–`" + maxName + "`"));
    if (n > max) {
      throw new InvalidSetting(name + "=" + n + " is above " + maxName + "=" + max);
    }
    return n;
  }

  /** A string whose default is not a value but a rule ({@code shownDefault} says it); blank when unset. */
  public String optional(String name, String shownDefault) {
    read.add(new Definition(name, shownDefault, ""));
    return raw(name, "");
  }

  public long longInteger(String name, long dflt, long min, long max) {
    read.add(new Definition(name, Long.toString(dflt), min + "–" + max));
    String v = values.get(name);
    if (v == null || v.isBlank()) {
      return dflt;
    }
    try {
      long n = Long.parseLong(v.trim());
      if (n < min || n > max) {
        throw new InvalidSetting(name + "=" + v + " is out of bounds [" + min + ", " + max + "]");
      }
      return n;
    } catch (NumberFormatException e) {
      throw new InvalidSetting(name + "=" + v + " is not an integer");
    }
  }

  public double decimal(String name, double dflt, double min, double max) {
    read.add(new Definition(name, plain(dflt), plain(min) + "–" + plain(max)));
    String v = values.get(name);
    if (v == null || v.isBlank()) {
      return dflt;
    }
    double d;
    try {
      d = Double.parseDouble(v.trim());
    } catch (NumberFormatException e) {
      throw new InvalidSetting(name + "=" + v + " is not a number");
    }
    if (!(d >= min && d <= max)) {
      throw new InvalidSetting(name + "=" + v + " is out of bounds [" + min + ", " + max + "]");
    }
    return d;
  }

  /** The raw value as given, or null: for settings whose default is another setting's value. */
  public String given(String name) {
    String v = values.get(name);
    return v == null || v.isBlank() ? null : v.trim();
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
      default -> throw new InvalidSetting(name + "=" + v + " must be true or false");
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
    throw new InvalidSetting(name + "=" + v + " must be one of " + String.join(", ", allowed));
  }

  private static String plain(double d) {
    return java.math.BigDecimal.valueOf(d).stripTrailingZeros().toPlainString();
  }

  private String raw(String name, String dflt) {
    String v = values.get(name);
    return v == null || v.isBlank() ? dflt : v.trim();
  }
}
