package dev.quarry.bench;

import java.util.List;
import java.util.Map;

/**
 * The trec_eval definitions: nDCG with linear gain (the grade) and a log2(rank + 1) discount against
 * the ideal ordering of all judged documents; recall over all relevant documents; reciprocal rank of
 * the first relevant document within the cut-off, 0 when there is none.
 */
public final class Metrics {
  private Metrics() {}

  public static double ndcg(List<String> ranking, Map<String, Integer> grades, int k) {
    double dcg = 0;
    for (int i = 0; i < Math.min(k, ranking.size()); i++) {
      dcg += Math.max(0, grades.getOrDefault(ranking.get(i), 0)) / log2(i + 2);
    }
    List<Integer> ideal = grades.values().stream().filter(g -> g > 0).sorted((a, b) -> b - a).toList();
    double idcg = 0;
    for (int i = 0; i < Math.min(k, ideal.size()); i++) {
      idcg += ideal.get(i) / log2(i + 2);
    }
    return idcg == 0 ? 0 : dcg / idcg;
  }

  public static double recall(List<String> ranking, Map<String, Integer> grades, int k) {
    long relevant = grades.values().stream().filter(g -> g > 0).count();
    if (relevant == 0) {
      return 0;
    }
    long found = ranking.stream().limit(k).distinct().filter(d -> grades.getOrDefault(d, 0) > 0).count();
    return (double) found / relevant;
  }

  public static double reciprocalRank(List<String> ranking, Map<String, Integer> grades, int k) {
    for (int i = 0; i < Math.min(k, ranking.size()); i++) {
      if (grades.getOrDefault(ranking.get(i), 0) > 0) {
        return 1.0 / (i + 1);
      }
    }
    return 0;
  }

  private static double log2(double x) {
    return Math.log(x) / Math.log(2);
  }
}
