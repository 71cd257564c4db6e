package dev.quarry.bench;

import java.util.List;

/** One Prometheus text scrape of the gateway's {@code /metrics}, read by sample name and labels. */
record Scrape(List<String> lines) {
  static Scrape of(String body) {
    return new Scrape(body == null ? List.of() : body.lines().filter(l -> !l.startsWith("#")).toList());
  }

  /** The sum of the samples named {@code name} that carry every one of {@code labels} ({@code key="value"}). */
  double sum(String name, String... labels) {
    double total = 0;
    for (String line : lines) {
      if (!line.startsWith(name) || line.length() <= name.length()) {
        continue;
      }
      char next = line.charAt(name.length());
      if (next != '{' && next != ' ') {
        continue;
      }
      boolean all = true;
      for (String label : labels) {
        all &= line.contains(label);
      }
      if (all) {
        try {
          double value = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
          if (Double.isFinite(value)) {
            total += value; // NaN and the infinities (a gauge with nothing behind it) are not figures to add
          }
        } catch (NumberFormatException e) {
          // not a sample line: nothing to add
        }
      }
    }
    return total;
  }

  boolean empty() {
    return lines.isEmpty();
  }
}
