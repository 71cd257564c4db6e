package dev.quarry.bench;

import dev.quarry.search.Fusion;
import dev.quarry.search.Fusion.Method;
import dev.quarry.search.Fusion.Scored;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.zip.CRC32;

/**
 * Fusion functions compared on the same two rankings Quarry's search fuses (its BM25 and its
 * vector candidates, 100 each, with their scores), so that one setting can be chosen for every
 * collection without looking at the queries it is reported on.
 *
 * <p>The queries of each collection are split once by a hash of their id: the tuning half chooses
 * each function's parameter (the one with the best mean nDCG@10 over the collections' tuning halves,
 * the same value for every collection), the report half then scores it.
 */
final class FusionStudy {
  /** One judged query's two candidate lists, as document ids with their side's score. */
  record Runs(String queryId, List<Scored<String>> fullText, List<Scored<String>> vector,
      Map<String, Integer> grades) {}

  /** One collection's runs. */
  record Collection(String name, List<Runs> runs) {}

  /** A ranking of one query's two candidate lists: the fused ids, best first, at most 10. */
  interface Fuser {
    List<String> rank(List<Scored<String>> fullText, List<Scored<String>> vector);
  }

  /**
   * A function with the parameter its tuning chose, and its nDCG@10 per collection and half; {@code
   * setting} says what was chosen ({@code fusion} is null for a function that is not a {@link Fusion}).
   */
  record Result(String family, String setting, Fusion fusion, double[] tune, double[] report) {
    double meanTune() {
      return mean(tune);
    }

    double meanReport() {
      return mean(report);
    }
  }

  private FusionStudy() {}

  /**
   * {@code FusionStudy DIR}: the study again on the runs a retrieval bench saved under DIR
   * ({@link #save}), without loading anything: for trying another function in seconds.
   */
  public static void main(String[] args) throws Exception {
    java.nio.file.Path dir = java.nio.file.Path.of(args.length > 0 ? args[0] : "bench/target/bench-work/fusion-runs");
    List<Collection> collections = new ArrayList<>();
    for (String name : List.of("vaswani", "cranfield", "msmarco")) {
      java.nio.file.Path f = dir.resolve(name + ".tsv");
      if (java.nio.file.Files.exists(f)) {
        collections.add(load(f, name));
      }
    }
    System.out.println(markdown(collections, study(collections)));
    System.out.println(heldOut(collections));
  }

  /** One line per query and side: query id, side (b or v), then id:score pairs; grades as g lines. */
  static void save(java.nio.file.Path dir, Collection c) throws java.io.IOException {
    java.nio.file.Files.createDirectories(dir);
    StringBuilder out = new StringBuilder();
    for (Runs r : c.runs()) {
      out.append(r.queryId()).append("\tb");
      r.fullText().forEach(s -> out.append('\t').append(s.id()).append(' ').append(s.score()));
      out.append('\n').append(r.queryId()).append("\tv");
      r.vector().forEach(s -> out.append('\t').append(s.id()).append(' ').append(s.score()));
      out.append('\n').append(r.queryId()).append("\tg");
      r.grades().forEach((id, g) -> out.append('\t').append(id).append(' ').append(g));
      out.append('\n');
    }
    java.nio.file.Files.writeString(dir.resolve(c.name() + ".tsv"), out);
  }

  static Collection load(java.nio.file.Path file, String name) throws java.io.IOException {
    List<String> lines = java.nio.file.Files.readAllLines(file);
    List<Runs> runs = new ArrayList<>();
    for (int i = 0; i + 2 < lines.size(); i += 3) {
      List<List<Scored<String>>> sides = new ArrayList<>();
      Map<String, Integer> grades = new java.util.HashMap<>();
      for (int k = 0; k < 3; k++) {
        String[] f = lines.get(i + k).split("\t");
        List<Scored<String>> side = new ArrayList<>();
        for (int j = 2; j < f.length; j++) {
          String[] p = f[j].split(" ");
          if (k == 2) {
            grades.put(p[0], Integer.parseInt(p[1]));
          } else {
            side.add(new Scored<>(p[0], Double.parseDouble(p[1])));
          }
        }
        sides.add(side);
      }
      runs.add(new Runs(lines.get(i).split("\t")[0], sides.get(0), sides.get(1), grades));
    }
    return new Collection(name, runs);
  }

  /** The fixed split: a query is in the tuning half when the CRC-32 of its id is even. */
  static boolean tuning(String queryId) {
    CRC32 crc = new CRC32();
    crc.update(queryId.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    return (crc.getValue() & 1) == 0;
  }

  /** The candidate settings of each function, grouped by family. */
  static Map<String, List<Fusion>> families() {
    Map<String, List<Fusion>> out = new java.util.LinkedHashMap<>();
    List<Fusion> rrf = new ArrayList<>();
    for (int k : new int[] {10, 20, 40, 60, 100}) {
      for (double w : weights()) {
        rrf.add(new Fusion(Method.RRF, w, k, 0));
      }
    }
    out.put("weighted RRF (k, vector weight)", rrf);
    for (Method m : List.of(Method.MIN_MAX, Method.Z_SCORE, Method.DBSF, Method.THEORETICAL_MIN_MAX)) {
      List<Fusion> list = new ArrayList<>();
      for (double w : weights()) {
        list.add(new Fusion(m, w, 60, 0));
      }
      out.put("convex, " + m.name().toLowerCase(Locale.ROOT).replace('_', '-') + " (vector weight)", list);
    }
    // Min-max where being a candidate of a side is worth something of itself (as a rank is in RRF).
    List<Fusion> present = new ArrayList<>();
    for (double p : new double[] {0.1, 0.2, 0.3, 0.4, 0.5, 0.6}) {
      for (double w : weights()) {
        present.add(new Fusion(Method.MIN_MAX, w, 60, p));
      }
    }
    out.put("convex, min-max with presence (vector weight, presence)", present);
    return out;
  }

  private static List<Double> weights() {
    List<Double> w = new ArrayList<>();
    for (int i = 0; i <= 20; i++) {
      w.add(i / 20.0);
    }
    return w;
  }

  /** The best setting of each family on the tuning halves, with both halves' figures. */
  static List<Result> study(List<Collection> collections) {
    List<Result> out = new ArrayList<>();
    out.add(evaluate("plain RRF (k = 60, equal weights; search before)", Fusion.PLAIN_RRF, collections));
    for (Map.Entry<String, List<Fusion>> family : families().entrySet()) {
      Result best = null;
      for (Fusion f : family.getValue()) {
        Result r = evaluate(family.getKey(), f, collections);
        if (best == null || r.meanTune() > best.meanTune() + 1e-12) {
          best = r;
        }
      }
      out.add(best);
    }
    out.add(before(collections));
    out.add(evaluate("Quarry's choice (Fusion.DEFAULT)", Fusion.DEFAULT, collections));
    return out;
  }

  /**
   * How each family does on a collection it was not tuned on: its parameter chosen on the tune
   * halves of the other collections, then scored on the held-out collection's tune half (so that a
   * family can be chosen by it without looking at any report half) and its report half, once per
   * collection held out. This is what issue 16 asks of search: to hold on collections nobody tuned
   * it on.
   */
  static String heldOut(List<Collection> collections) {
    StringBuilder md = new StringBuilder("| fusion |");
    for (Collection c : collections) {
      md.append(" held out: ").append(c.name()).append(" (setting chosen on the others) | tune | report |");
    }
    md.append(" mean tune | mean report |\n|---|").append("---|---:|---:|".repeat(collections.size())).append("---:|---:|\n");
    for (Map.Entry<String, List<Fusion>> family : families().entrySet()) {
      List<Result> all = family.getValue().stream().map(f -> evaluate(family.getKey(), f, collections)).toList();
      md.append("| ").append(family.getKey()).append(" |");
      double sum = 0;
      double sumTune = 0;
      for (int held = 0; held < collections.size(); held++) {
        Result best = null;
        double bestTune = Double.NEGATIVE_INFINITY;
        for (Result r : all) {
          double t = 0;
          for (int c = 0; c < collections.size(); c++) {
            t += c == held ? 0 : r.tune()[c];
          }
          if (t > bestTune + 1e-12) {
            best = r;
            bestTune = t;
          }
        }
        sum += best.report()[held];
        sumTune += best.tune()[held];
        md.append(' ').append(best.setting()).append(String.format(Locale.ROOT, " | %.4f | %.4f |",
            best.tune()[held], best.report()[held]));
      }
      md.append(String.format(Locale.ROOT, " %.4f | %.4f |%n", sumTune / collections.size(), sum / collections.size()));
    }
    return md.toString();
  }

  /** A family's tuning-half figures across its parameter, for the record of how flat it is. */
  static List<Result> curve(String family, List<Collection> collections) {
    return families().get(family).stream().map(f -> evaluate(family, f, collections)).toList();
  }

  static Result evaluate(String family, Fusion fusion, List<Collection> collections) {
    return evaluate(family, fusion.toString(), fusion, (text, vec) -> fusion.fuse(text, vec, 10, RetrievalBench.DEPTH)
        .stream().map(Scored::id).toList(), collections);
  }

  /**
   * Search before issue 16's part A: min-max, vector weight 0.7, presence 0.2, and equal weights
   * whenever the full-text list was complete (shorter than asked), however long.
   */
  static Result before(List<Collection> collections) {
    Fusion equal = new Fusion(Method.MIN_MAX, 0.5, 60, BEFORE.presence());
    return evaluate("before: min-max with presence, equal weights for every complete full-text list", BEFORE
        + ", equal below " + RetrievalBench.DEPTH + " matches", null, (text, vec) -> (text.size() < RetrievalBench.DEPTH
        ? equal : BEFORE).fuse(text, vec, 10, RetrievalBench.DEPTH).stream().map(Scored::id).toList(), collections);
  }

  /** The fusion search used before issue 16's part A (its rule for complete lists aside). */
  static final Fusion BEFORE = new Fusion(Method.MIN_MAX, 0.7, 60, 0.2);

  static Result evaluate(String family, String setting, Fusion fusion, Fuser fuser, List<Collection> collections) {
    double[] tune = new double[collections.size()];
    double[] report = new double[collections.size()];
    for (int c = 0; c < collections.size(); c++) {
      double[] sum = new double[2];
      int[] n = new int[2];
      for (Runs r : collections.get(c).runs()) {
        List<String> ranking = fuser.rank(r.fullText(), r.vector());
        int half = tuning(r.queryId()) ? 0 : 1;
        sum[half] += Metrics.ndcg(ranking, r.grades(), 10);
        n[half]++;
      }
      tune[c] = sum[0] / Math.max(1, n[0]);
      report[c] = sum[1] / Math.max(1, n[1]);
    }
    return new Result(family, setting, fusion, tune, report);
  }

  static double mean(double[] v) {
    double s = 0;
    for (double x : v) {
      s += x;
    }
    return v.length == 0 ? 0 : s / v.length;
  }

  /** The study as a Markdown table: each family's chosen setting, tuning and report halves. */
  static String markdown(List<Collection> collections, List<Result> results) {
    StringBuilder md = new StringBuilder("| fusion | chosen setting |");
    for (Collection c : collections) {
      md.append(' ').append(c.name()).append(" tune | ").append(c.name()).append(" report |");
    }
    md.append(" mean tune | mean report |\n|---|---|");
    md.append("---:|---:|".repeat(collections.size() + 1)).append('\n');
    for (Result r : results) {
      md.append("| ").append(r.family()).append(" | ").append(r.setting()).append(" |");
      for (int c = 0; c < collections.size(); c++) {
        md.append(String.format(Locale.ROOT, " %.4f | %.4f |", r.tune()[c], r.report()[c]));
      }
      md.append(String.format(Locale.ROOT, " %.4f | %.4f |%n", r.meanTune(), r.meanReport()));
    }
    return md.toString();
  }
}
