package dev.quarry.search;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * How the full-text (BM25) and the vector ranking of one query become one ranking.
 *
 * <p>{@link #DEFAULT} is what search uses: a convex combination of the two retrievers' scores, each
 * scaled by its own candidates' distribution for the query ({@link Method#DBSF}: mean - 3 sd to mean
 * + 3 sd onto [0, 1]), weighted {@link #DEFAULT_VECTOR_WEIGHT} to the vectors. Plain
 * reciprocal-rank fusion throws the scores away and weighs both sides alike: where the vectors are
 * much stronger than BM25 it fell below the vectors alone. The family was chosen as the one whose
 * setting holds best on a collection it was not tuned on (each of three collections held out in
 * turn, the setting chosen on the others' tuning halves and scored on the held-out one's tuning
 * half), and its weight as the best mean nDCG@10 over all three tuning halves; both are reported
 * on the other halves (BENCHMARKS.md, "Retrieval quality", "Fusion: what was tried", with the other
 * functions of {@link Method} measured the same way). Min-max with a bonus for being a candidate
 * (search until issue 16) scored a little higher on the tuning halves, but its chosen weight swung
 * from 0.65 to 0.90 with the collections it was tuned on, and it did worse on the one held out.
 *
 * @param method the fusion function
 * @param vectorWeight the weight of the vector side, in [0, 1]; the full-text side gets the rest
 * @param rrfK the rank constant of {@link Method#RRF} (ignored by the others)
 * @param presence what being among a side's candidates at all is worth, in [0, 1): a normalised
 *     score s becomes {@code presence + (1 - presence) * s} for a candidate of that side, while one
 *     the side did not return keeps 0 (ignored by {@link Method#RRF}, whose ranks already give it)
 */
public record Fusion(Method method, double vectorWeight, int rrfK, double presence) {

  /** The weight of the vector side in {@link #DEFAULT}. */
  public static final double DEFAULT_VECTOR_WEIGHT = 0.75;

  /**
   * The most matches a complete full-text list may hold and still count as BM25 having singled the
   * query's chunks out (see {@link #fuse}): a page of results.
   */
  public static final int FEW_MATCHES = 10;

  public static final Fusion DEFAULT = new Fusion(Method.DBSF, DEFAULT_VECTOR_WEIGHT, 60, 0);

  /** Plain reciprocal-rank fusion, k = 60, equal weights: what search did before. */
  public static final Fusion PLAIN_RRF = new Fusion(Method.RRF, 0.5, 60, 0);

  /** The fusion functions. A candidate missing from one side's list gets that side's 0. */
  public enum Method {
    /** {@code w / (k + rank)} per side. */
    RRF,
    /** Scores scaled to [0, 1] between the list's lowest and highest. */
    MIN_MAX,
    /** Scores as standard deviations above the list's mean; a missing candidate gets the list's lowest. */
    Z_SCORE,
    /**
     * Distribution-based: scores scaled to [0, 1] between mean - 3 sd and mean + 3 sd of the
     * list, clipped.
     */
    DBSF,
    /**
     * Theoretical min-max: scaled between the score's theoretical floor (0 for BM25, -1 for a
     * cosine) and the list's highest.
     */
    THEORETICAL_MIN_MAX
  }

  /** One candidate of one side: an id and that side's score (BM25; cosine similarity). */
  public record Scored<T>(T id, double score) {}

  public Fusion {
    if (method == null) {
      throw new IllegalArgumentException("fusion method must not be null");
    }
    if (!(vectorWeight >= 0 && vectorWeight <= 1)) {
      throw new IllegalArgumentException("vector weight must be within [0, 1], got " + vectorWeight);
    }
    if (rrfK < 0) {
      throw new IllegalArgumentException("RRF k must be >= 0, got " + rrfK);
    }
    if (!(presence >= 0 && presence < 1)) {
      throw new IllegalArgumentException("presence must be within [0, 1), got " + presence);
    }
  }

  /**
   * The fused ranking, best first, at most {@code limit} long. Each list is one side's candidates,
   * best first, of at most {@code candidates} asked; ties in the fused score go to the lower id, so
   * the order is the same on every run.
   *
   * <p>A full-text list shorter than asked holds every chunk that has any of the query's terms. When
   * those are at most {@link #FEW_MATCHES}, BM25 has told a handful of matches from everything else
   * (an identifier, a name, a rare word), and its side weighs at least as much as the vectors' for
   * that query. Otherwise the weights are the fusion's own: a longer list that is merely complete
   * says more about the size of the tenant than about the query (on a small tenant most lists are
   * complete), and giving those the equal weights cost MS MARCO's natural-language questions
   * (BENCHMARKS.md, "Fusion: what was tried").
   */
  public <T extends Comparable<T>> List<Scored<T>> fuse(List<Scored<T>> fullText, List<Scored<T>> vector,
      int limit, int candidates) {
    boolean fewMatches = fullText.size() < candidates && fullText.size() <= FEW_MATCHES;
    double w = fewMatches ? Math.min(vectorWeight, 0.5) : vectorWeight;
    Map<T, double[]> both = new HashMap<>();
    side(fullText, 0, 1 - w, false, both);
    side(vector, 1, w, true, both);
    double[] floors = {floor(fullText, false), floor(vector, true)};
    List<Scored<T>> out = new ArrayList<>(both.size());
    for (Map.Entry<T, double[]> e : both.entrySet()) {
      double[] parts = e.getValue();
      double score = 0;
      for (int s = 0; s < 2; s++) {
        score += Double.isNaN(parts[s]) ? floors[s] * (s == 0 ? 1 - w : w) : parts[s];
      }
      out.add(new Scored<>(e.getKey(), score));
    }
    out.sort(Comparator.<Scored<T>>comparingDouble(Scored::score).reversed()
        .thenComparing(Scored::id));
    return out.size() > limit ? List.copyOf(out.subList(0, limit)) : out;
  }

  /** Writes one side's weighted normalised scores into slot {@code slot} of each candidate's pair. */
  private <T> void side(List<Scored<T>> list, int slot, double weight, boolean cosine, Map<T, double[]> both) {
    Normaliser n = normaliser(list, cosine);
    for (int i = 0; i < list.size(); i++) {
      Scored<T> c = list.get(i);
      double value = method == Method.RRF ? 1.0 / (rrfK + i + 1)
          : presence + (1 - presence) * n.apply(c.score());
      both.computeIfAbsent(c.id(), k -> new double[] {Double.NaN, Double.NaN})[slot] = weight * value;
    }
  }

  /** What a candidate that one side did not return gets from that side, before weighting. */
  private <T> double floor(List<Scored<T>> list, boolean cosine) {
    if (method != Method.Z_SCORE || list.isEmpty()) {
      return 0;
    }
    Normaliser n = normaliser(list, cosine);
    return n.apply(list.stream().mapToDouble(Scored::score).min().orElse(0));
  }

  private interface Normaliser {
    double apply(double score);
  }

  private <T> Normaliser normaliser(List<Scored<T>> list, boolean cosine) {
    if (list.isEmpty() || method == Method.RRF) {
      return s -> 0;
    }
    double min = Double.POSITIVE_INFINITY;
    double max = Double.NEGATIVE_INFINITY;
    double sum = 0;
    for (Scored<T> c : list) {
      min = Math.min(min, c.score());
      max = Math.max(max, c.score());
      sum += c.score();
    }
    double mean = sum / list.size();
    double squares = 0;
    for (Scored<T> c : list) {
      squares += (c.score() - mean) * (c.score() - mean);
    }
    double sd = Math.sqrt(squares / list.size());
    double lo = min;
    double hi = max;
    return switch (method) {
      case MIN_MAX -> s -> hi > lo ? (s - lo) / (hi - lo) : 1;
      case Z_SCORE -> s -> sd > 0 ? (s - mean) / sd : 0;
      case DBSF -> s -> sd > 0 ? Math.clamp((s - (mean - 3 * sd)) / (6 * sd), 0, 1) : 1;
      case THEORETICAL_MIN_MAX -> {
        double floor = cosine ? -1 : 0;
        yield s -> hi > floor ? (s - floor) / (hi - floor) : 1;
      }
      case RRF -> s -> 0;
    };
  }

  @Override
  public String toString() {
    return switch (method) {
      case RRF -> String.format(java.util.Locale.ROOT, "RRF k=%d, vector weight %.2f", rrfK, vectorWeight);
      default -> String.format(java.util.Locale.ROOT, "%s, vector weight %.2f%s",
          method.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'), vectorWeight,
          presence > 0 ? String.format(java.util.Locale.ROOT, ", presence %.2f", presence) : "");
    };
  }
}
