package dev.quarry.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class MetricsTest {
  private final Map<String, Integer> grades = Map.of("a", 3, "b", 1, "c", 0, "d", 2);

  @Test
  @DisplayName("nDCG is 1 for the ideal order and uses the grade as a linear gain with a log2 discount")
  void ndcg() {
    assertThat(Metrics.ndcg(List.of("a", "d", "b"), grades, 10)).isCloseTo(1.0, within(1e-12));
    double dcg = 1 / log2(2) + 3 / log2(3);               // b then a
    double idcg = 3 / log2(2) + 2 / log2(3) + 1 / log2(4); // a, d, b
    assertThat(Metrics.ndcg(List.of("b", "a"), grades, 10)).isCloseTo(dcg / idcg, within(1e-12));
    assertThat(Metrics.ndcg(List.of("x", "a"), grades, 1)).isZero();
  }

  @Test
  @DisplayName("recall counts relevant documents found within the cut-off over all relevant ones")
  void recall() {
    assertThat(Metrics.recall(List.of("a", "c", "x", "b"), grades, 100)).isCloseTo(2.0 / 3, within(1e-12));
    assertThat(Metrics.recall(List.of("a", "c", "x", "b"), grades, 3)).isCloseTo(1.0 / 3, within(1e-12));
    assertThat(Metrics.recall(List.of("a"), Map.of("z", 0), 100)).isZero();
  }

  @Test
  @DisplayName("reciprocal rank is that of the first relevant document, 0 past the cut-off")
  void reciprocalRank() {
    assertThat(Metrics.reciprocalRank(List.of("c", "x", "d"), grades, 10)).isCloseTo(1.0 / 3, within(1e-12));
    assertThat(Metrics.reciprocalRank(List.of("c", "x", "d"), grades, 2)).isZero();
  }

  private static double log2(double x) {
    return Math.log(x) / Math.log(2);
  }
}
