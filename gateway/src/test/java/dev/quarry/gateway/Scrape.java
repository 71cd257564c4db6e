package dev.quarry.gateway;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A Prometheus text exposition, parsed into samples: enough to assert on what /metrics shows. */
record Scrape(List<Sample> samples) {
  private static final Pattern LINE = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)})?\\s+(\\S+)(\\s+\\d+)?");
  private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\",?");

  record Sample(String name, Map<String, String> labels, double value) {}

  static Scrape parse(String text) {
    List<Sample> samples = new ArrayList<>();
    for (String line : text.split("\n")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      Matcher m = LINE.matcher(line.trim());
      if (!m.matches()) {
        throw new IllegalArgumentException("not a sample line: " + line);
      }
      Map<String, String> labels = new LinkedHashMap<>();
      if (m.group(3) != null) {
        Matcher l = LABEL.matcher(m.group(3));
        while (l.find()) {
          labels.put(l.group(1), l.group(2));
        }
      }
      samples.add(new Sample(m.group(1), labels, Double.parseDouble(m.group(4))));
    }
    return new Scrape(samples);
  }

  Set<String> names() {
    Set<String> names = new TreeSet<>();
    samples.forEach(s -> names.add(s.name()));
    return names;
  }

  /** The sum of the samples of a name whose labels include all the given ones (k1, v1, k2, v2, …). */
  double value(String name, String... labels) {
    double sum = 0;
    boolean found = false;
    for (Sample s : samples) {
      if (s.name().equals(name) && matches(s.labels(), labels)) {
        sum += s.value();
        found = true;
      }
    }
    if (!found) {
      throw new AssertionError("no sample " + name + " " + List.of(labels) + " in the scrape");
    }
    return sum;
  }

  /** {@link #value}, or 0 where no such series was exported yet (a label value not seen so far). */
  double valueOrZero(String name, String... labels) {
    return samples.stream().anyMatch(s -> s.name().equals(name) && matches(s.labels(), labels))
        ? value(name, labels) : 0;
  }

  private static boolean matches(Map<String, String> actual, String... wanted) {
    for (int i = 0; i + 1 < wanted.length; i += 2) {
      if (!wanted[i + 1].equals(actual.get(wanted[i]))) {
        return false;
      }
    }
    return true;
  }
}
