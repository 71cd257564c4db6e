package dev.quarry.bench;

import java.util.Arrays;
import java.util.Locale;

/** Latency summary of one series, nearest-rank percentiles. */
public record Percentiles(int count, double p50, double p95, double p99, double mean) {

  public static Percentiles of(double[] millis) {
    if (millis.length == 0) {
      throw new IllegalArgumentException("no samples");
    }
    double[] sorted = millis.clone();
    Arrays.sort(sorted);
    return new Percentiles(sorted.length, rank(sorted, 50), rank(sorted, 95), rank(sorted, 99),
        Arrays.stream(sorted).average().orElse(0));
  }

  static double rank(double[] sorted, double p) {
    int index = (int) Math.ceil(p / 100 * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
  }

  public String row(String system) {
    return String.format(Locale.ROOT, "| %s | %d | %.1f | %.1f | %.1f | %.1f |", system, count, p50, p95, p99, mean);
  }

  public static String header() {
    return "| system | queries | p50 ms | p95 ms | p99 ms | mean ms |\n|---|---:|---:|---:|---:|---:|";
  }
}
