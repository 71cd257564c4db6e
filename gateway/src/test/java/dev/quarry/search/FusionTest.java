package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.quarry.search.Fusion.Method;
import dev.quarry.search.Fusion.Scored;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("Fusion: two rankings with their scores become one")
class FusionTest {
  // BM25 scores are unbounded, cosines within [-1, 1]: min-max puts both on [0, 1] per query.
  private final List<Scored<String>> bm25 = List.of(
      new Scored<>("a", 12.0), new Scored<>("b", 9.0), new Scored<>("c", 3.0));
  private final List<Scored<String>> cosine = List.of(
      new Scored<>("c", 0.90), new Scored<>("d", 0.85), new Scored<>("a", 0.70));

  private static List<String> ids(List<Scored<String>> ranking) {
    return ranking.stream().map(Scored::id).toList();
  }

  @Test
  @DisplayName("min-max: each side scaled to [0, 1] over its own list, then weighted; a missing side counts 0")
  void minMax() {
    List<Scored<String>> fused = new Fusion(Method.MIN_MAX, 0.6, 60, 0).fuse(bm25, cosine, 10, 3);
    // a: 0.4 * 1 + 0.6 * 0 = 0.4; b: 0.4 * 6/9 = 0.267; c: 0.4 * 0 + 0.6 * 1 = 0.6; d: 0.6 * 0.75 = 0.45
    assertThat(ids(fused)).containsExactly("c", "d", "a", "b");
    assertThat(fused.get(0).score()).isCloseTo(0.6, within(1e-9));
    assertThat(fused.get(1).score()).isCloseTo(0.45, within(1e-9));
    assertThat(fused.get(3).score()).isCloseTo(0.4 * 6 / 9, within(1e-9));
  }

  @Test
  @DisplayName("a weight of 1 is the vector ranking, a weight of 0 the BM25 ranking")
  void extremes() {
    assertThat(ids(new Fusion(Method.MIN_MAX, 1, 60, 0).fuse(bm25, cosine, 3, 3))).containsExactly("c", "d", "a");
    assertThat(ids(new Fusion(Method.MIN_MAX, 0, 60, 0).fuse(bm25, cosine, 2, 3))).containsExactly("a", "b");
  }

  @Test
  @DisplayName("plain RRF: 1/(60 + rank) from each side, equal weights")
  void plainRrf() {
    List<Scored<String>> fused = Fusion.PLAIN_RRF.fuse(bm25, cosine, 10, 3);
    assertThat(ids(fused)).startsWith("a", "c");
    assertThat(fused.get(0).score()).isCloseTo(0.5 / 61 + 0.5 / 63, within(1e-12));
  }

  @Test
  @DisplayName("at most limit results; equal scores in the order of their ids, the same on every run")
  void limitAndTies() {
    List<Scored<String>> same = List.of(new Scored<>("y", 1.0), new Scored<>("x", 1.0));
    assertThat(ids(Fusion.DEFAULT.fuse(same, List.of(), 5, 3))).containsExactly("x", "y");
    assertThat(Fusion.DEFAULT.fuse(bm25, cosine, 2, 3)).hasSize(2);
    assertThat(Fusion.DEFAULT.fuse(List.<Scored<String>>of(), List.of(), 5, 3)).isEmpty();
  }

  @Test
  @DisplayName("z-score: a candidate one side did not return gets that side's lowest, not 0")
  void zScoreFloor() {
    List<Scored<String>> fused = new Fusion(Method.Z_SCORE, 0.5, 60, 0).fuse(bm25, cosine, 10, 3);
    // d is missing from BM25: its BM25 part is c's (the lowest), so d still ranks under c.
    assertThat(ids(fused).indexOf("c")).isLessThan(ids(fused).indexOf("d"));
  }

  @Test
  @DisplayName("a full-text list shorter than asked (every match) weighs at least as much as the vectors")
  void exhaustiveFullText() {
    Fusion heavy = new Fusion(Method.MIN_MAX, 0.8, 60, 0);
    List<Scored<String>> only = List.of(new Scored<>("id", 7.0));
    List<Scored<String>> near = List.of(new Scored<>("v", 0.9), new Scored<>("w", 0.8),
        new Scored<>("id", 0.75), new Scored<>("z", 0.5));
    // Three asked, one found: the identifier's only match. 0.5 * 1 + 0.5 * 0.625 beats 0.5 * 1.
    assertThat(ids(heavy.fuse(only, near, 1, 3))).containsExactly("id");
    // The same list when one was asked is not known to be every match: the fusion's own weights.
    assertThat(ids(heavy.fuse(only, near, 1, 1))).containsExactly("v");
  }

  @Test
  @DisplayName("a complete full-text list of more than a page of matches keeps the fusion's own weights")
  void completeButLongFullText() {
    Fusion heavy = new Fusion(Method.MIN_MAX, 0.8, 60, 0);
    // Every match of a small tenant: more than FEW_MATCHES chunks, fewer than the 100 asked.
    List<Scored<String>> matches = new java.util.ArrayList<>();
    for (int i = 0; i <= Fusion.FEW_MATCHES; i++) {
      matches.add(new Scored<>("t" + i, 20.0 - i));
    }
    List<Scored<String>> near = List.of(new Scored<>("v", 0.9), new Scored<>("t0", 0.6), new Scored<>("w", 0.5));
    // At 0.8 to the vectors v (0.8 * 1) beats t0 (0.2 * 1 + 0.8 * 0.25); at 0.5 t0 would win.
    assertThat(ids(heavy.fuse(matches, near, 1, 100))).containsExactly("v");
    assertThat(ids(heavy.fuse(matches.subList(0, Fusion.FEW_MATCHES), near, 1, 100))).containsExactly("t0");
  }

  @Test
  @DisplayName("a weight outside [0, 1] or a missing method is refused")
  void refused() {
    assertThatThrownBy(() -> new Fusion(Method.MIN_MAX, 1.5, 60, 0)).hasMessageContaining("[0, 1]");
    assertThatThrownBy(() -> new Fusion(Method.MIN_MAX, Double.NaN, 60, 0)).hasMessageContaining("[0, 1]");
    assertThatThrownBy(() -> new Fusion(null, 0.5, 60, 0)).hasMessageContaining("method");
  }
}
