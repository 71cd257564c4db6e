package dev.quarry.ingest;

import dev.quarry.store.DocItem;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * How close a converter's items come to docling's reference items for the same source. The
 * reference is docling's own JSON output next to the source, imported with
 * {@link DoclingJsonConverter}; the figures are agreement ratios, never byte equality.
 *
 * <p>Items are aligned in order (a longest-common-subsequence over items whose words overlap
 * enough); label, page and heading-level agreement are measured on the aligned pairs, and
 * {@code labelConfusions} counts the disagreeing pairs by "our label->docling's label".
 */
public record ConversionReport(
    String document,
    int items,
    int referenceItems,
    int commonTokens,
    int tokens,
    int referenceTokens,
    double tokenRecall,
    double tokenPrecision,
    int aligned,
    int alignable,
    int sameLabel,
    int pagedAligned,
    int samePages,
    int referenceHeaders,
    int sameHeadingLevel,
    int orderedHeaderPairs,
    int sameHeaderOrder,
    List<String> tableShapes,
    List<String> referenceTableShapes,
    Map<String, Integer> labelConfusions) {

  /** Two items are the same item when this share of their distinct words is common to both. */
  private static final double MATCH = 0.5;

  /**
   * The reference items docling produced for {@code source}: its DoclingDocument JSON beside it
   * ({@code name.json}, or {@code stem.json} for the PDFs), else docling's Markdown export of it
   * ({@code name.md}, or {@code stem.md} beside a DoclingDocument JSON source), read with
   * {@link MarkdownConverter} (so its labels are only those Markdown can say).
   */
  public static List<DocItem> reference(Path source) {
    String name = source.getFileName().toString();
    String stem = name.contains(".") ? name.substring(0, name.lastIndexOf('.')) : name;
    try {
      for (Path json : List.of(source.resolveSibling(name + ".json"), source.resolveSibling(stem + ".json"))) {
        if (Files.isRegularFile(json) && !json.equals(source)) {
          return new DoclingJsonConverter().convert(json.getFileName().toString(), Files.readAllBytes(json)).items();
        }
      }
      for (Path md : List.of(source.resolveSibling(name + ".md"), source.resolveSibling(stem + ".md"))) {
        if (Files.isRegularFile(md) && !md.equals(source)) {
          return new MarkdownConverter().convert(md.getFileName().toString(), Files.readAllBytes(md)).items();
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (IngestException e) {
      throw new IllegalStateException("the reference of " + source + " does not import", e);
    }
    throw new IllegalArgumentException("no docling reference beside " + source);
  }

  /**
   * Every source of {@code doclingDir} (docling's test data: {@code docx/}, {@code html/},
   * {@code md/}, {@code pdf/}, {@code docling-json/}) that has a reference, sorted by folder and
   * name. A {@code .json} or {@code .md} is a reference, except a DoclingDocument JSON under
   * {@code docling-json/} and a Markdown source under {@code md/}.
   */
  public static List<Path> pairs(Path doclingDir) {
    List<Path> out = new ArrayList<>();
    try (var folders = Files.list(doclingDir)) {
      for (Path folder : folders.filter(Files::isDirectory).sorted().toList()) {
        String kind = folder.getFileName().toString();
        try (var files = Files.list(folder)) {
          for (Path f : files.filter(Files::isRegularFile).sorted().toList()) {
            String n = f.getFileName().toString();
            boolean source = switch (kind) {
              case "docling-json" -> n.endsWith(".json");
              case "md" -> n.endsWith(".md") && !n.endsWith(".md.md");
              default -> !n.endsWith(".json") && !n.endsWith(".md");
            };
            if (source) {
              out.add(f);
            }
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }

  /**
   * What ingestion stores of {@code source} (sniffed and converted by {@link Converters}, through
   * {@link TextHygiene}), compared with docling's reference.
   */
  public static ConversionReport ingested(Converters converters, Path source) throws IngestException {
    try {
      byte[] bytes = Files.readAllBytes(source);
      String name = source.getFileName().toString();
      SourceType type = converters.detect(name, null, bytes);
      List<DocItem> actual = converters.convertClean(type, name, bytes).document().items();
      return compare(name, actual, reference(source));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Converts {@code source} with {@code converter} and compares it with docling's reference. */
  public static ConversionReport of(Converter converter, Path source) {
    try {
      List<DocItem> actual = converter.convert(source.getFileName().toString(), Files.readAllBytes(source)).items();
      return compare(source.getFileName().toString(), actual, reference(source));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (IngestException e) {
      throw new IllegalStateException(source + " does not convert", e);
    }
  }

  public static ConversionReport compare(String document, List<DocItem> actual, List<DocItem> reference) {
    Map<String, Integer> actualWords = bag(actual);
    Map<String, Integer> referenceWords = bag(reference);
    int common = 0;
    for (Map.Entry<String, Integer> e : referenceWords.entrySet()) {
      common += Math.min(e.getValue(), actualWords.getOrDefault(e.getKey(), 0));
    }
    int actualTotal = actualWords.values().stream().mapToInt(Integer::intValue).sum();
    int referenceTotal = referenceWords.values().stream().mapToInt(Integer::intValue).sum();

    List<DocItem> a = withWords(actual);
    List<DocItem> r = withWords(reference);
    int sameLabel = 0;
    int samePages = 0;
    int paged = 0;
    int headers = 0;
    int sameLevel = 0;
    Map<String, Integer> confusions = new TreeMap<>();
    List<int[]> pairs = align(a, r);
    for (int[] p : pairs) {
      DocItem x = a.get(p[0]);
      DocItem y = r.get(p[1]);
      if (canonicalLabel(x.label()).equals(canonicalLabel(y.label()))) {
        sameLabel++;
      } else {
        confusions.merge(x.label() + "->" + y.label(), 1, Integer::sum);
      }
      // Pages are compared where the reference has them (a Markdown export or a DOCX has none).
      if (!y.pageNumbers().isEmpty()) {
        paged++;
        if (x.pageNumbers().equals(y.pageNumbers())) {
          samePages++;
        }
      }
      if (y.label().equals("section_header")) {
        headers++;
        if (x.label().equals("section_header") && x.headingLevel() == y.headingLevel()) {
          sameLevel++;
        }
      }
    }
    // Heading order: for consecutive aligned headers whose reference levels differ, whether ours
    // differ the same way (deeper, or higher). A reference that puts every header at level 1 (as
    // docling does for PDFs) says nothing about order, so it neither rewards nor punishes depth.
    int ordered = 0;
    int sameOrder = 0;
    int[] previous = null;
    for (int[] p : pairs) {
      if (!a.get(p[0]).label().equals("section_header")
          || !r.get(p[1]).label().equals("section_header")) {
        continue;
      }
      if (previous != null) {
        int want = Integer.compare(r.get(p[1]).headingLevel(), r.get(previous[1]).headingLevel());
        int got = Integer.compare(a.get(p[0]).headingLevel(), a.get(previous[0]).headingLevel());
        if (want != 0) {
          ordered++;
          sameOrder += want == got ? 1 : 0;
        }
      }
      previous = p;
    }
    return new ConversionReport(document, actual.size(), reference.size(), common, actualTotal,
        referenceTotal, ratio(common, referenceTotal), ratio(common, actualTotal), pairs.size(), r.size(),
        sameLabel, paged, samePages, headers, sameLevel, ordered, sameOrder, shapes(actual), shapes(reference), confusions);
  }

  /** Share of the reference's alignable items (those with words) that found a partner. */
  public double alignment() {
    return ratio(aligned, alignable);
  }

  public double labelAgreement() {
    return ratio(sameLabel, aligned);
  }

  /** Among aligned items whose reference has pages, the share with the same pages. */
  public double pageAgreement() {
    return ratio(samePages, pagedAligned);
  }

  /** Among aligned reference section headers, the share converted as headers of the same level. */
  public double headingLevelAgreement() {
    return ratio(sameHeadingLevel, referenceHeaders);
  }

  /**
   * Among consecutive aligned headers whose reference levels differ, the share whose levels here
   * differ the same way; NaN when the reference orders none (every header at one level).
   */
  public double headingOrderAgreement() {
    return ratio(sameHeaderOrder, orderedHeaderPairs);
  }

  /** How many of the reference's tables have a table of the same rows × columns here. */
  public int rightShapeTables() {
    Map<String, Integer> ours = new HashMap<>();
    tableShapes.forEach(t -> ours.merge(t, 1, Integer::sum));
    int right = 0;
    for (String t : referenceTableShapes) {
      if (ours.getOrDefault(t, 0) > 0) {
        ours.merge(t, -1, Integer::sum);
        right++;
      }
    }
    return right;
  }

  /** Whether both sides have the same tables, in order, with the same rows × columns. */
  public boolean tablesAgree() {
    return tableShapes.equals(referenceTableShapes);
  }

  public String summary() {
    return String.format(Locale.ROOT,
        "%s: items %d/%d ref, words recall %.3f precision %.3f, aligned %.3f (%d/%d), labels %.3f,"
            + " pages %.3f, heading levels %.3f (%d headers), heading order %.3f (%d pairs), tables %s vs ref %s, label confusions"
            + " (ours->ref) %s",
        document, items, referenceItems, tokenRecall, tokenPrecision, alignment(), aligned, alignable,
        labelAgreement(), pageAgreement(), headingLevelAgreement(), referenceHeaders,
        headingOrderAgreement(), orderedHeaderPairs, tableShapes,
        referenceTableShapes, labelConfusions);
  }

  /** "rows×cols" of a Markdown table as TableGrid renders it (separator line excluded). */
  public static String tableShape(String markdown) {
    String[] lines = markdown.split("\n");
    int cols = lines[0].split("(?<!\\\\)\\|", -1).length - 2;
    return (lines.length - 1) + "x" + cols;
  }

  private static List<String> shapes(List<DocItem> items) {
    List<String> out = new ArrayList<>();
    for (DocItem i : items) {
      if (i.label().equals("table") && !i.text().isEmpty()) {
        out.add(tableShape(i.text()));
      }
    }
    return out;
  }

  /** Docling says "text" where other converters say "paragraph": the same thing. */
  private static String canonicalLabel(String label) {
    return label.equals("paragraph") ? "text" : label;
  }

  public static List<String> words(String text) {
    String norm = Normalizer.normalize(text, Normalizer.Form.NFKC).toLowerCase(Locale.ROOT);
    List<String> out = new ArrayList<>();
    for (String w : norm.split("[^\\p{L}\\p{N}]+")) {
      if (!w.isEmpty()) {
        out.add(w);
      }
    }
    return out;
  }

  private static Map<String, Integer> bag(List<DocItem> items) {
    Map<String, Integer> bag = new HashMap<>();
    for (DocItem i : items) {
      // A picture's text repeats its caption, which is an item of its own.
      if (i.label().equals("picture")) {
        continue;
      }
      for (String w : words(i.text())) {
        bag.merge(w, 1, Integer::sum);
      }
    }
    return bag;
  }

  private static List<DocItem> withWords(List<DocItem> items) {
    return items.stream().filter(i -> !i.label().equals("picture") && !words(i.text()).isEmpty()).toList();
  }

  /** Longest common subsequence of items, where "equal" means enough shared words. */
  private static List<int[]> align(List<DocItem> a, List<DocItem> r) {
    List<Set<String>> aw = a.stream().map(i -> (Set<String>) new HashSet<>(words(i.text()))).toList();
    List<Set<String>> rw = r.stream().map(i -> (Set<String>) new HashSet<>(words(i.text()))).toList();
    int n = a.size();
    int m = r.size();
    int[][] best = new int[n + 1][m + 1];
    for (int i = n - 1; i >= 0; i--) {
      for (int j = m - 1; j >= 0; j--) {
        int skip = Math.max(best[i + 1][j], best[i][j + 1]);
        best[i][j] = similar(aw.get(i), rw.get(j)) ? Math.max(skip, best[i + 1][j + 1] + 1) : skip;
      }
    }
    List<int[]> pairs = new ArrayList<>();
    int i = 0;
    int j = 0;
    while (i < n && j < m) {
      if (similar(aw.get(i), rw.get(j)) && best[i][j] == best[i + 1][j + 1] + 1) {
        pairs.add(new int[] {i, j});
        i++;
        j++;
      } else if (best[i + 1][j] >= best[i][j + 1]) {
        i++;
      } else {
        j++;
      }
    }
    return pairs;
  }

  private static boolean similar(Set<String> x, Set<String> y) {
    int small = Math.min(x.size(), y.size());
    int large = Math.max(x.size(), y.size());
    if (small < MATCH * large) {
      return false;
    }
    int common = 0;
    Set<String> probe = x.size() <= y.size() ? x : y;
    Set<String> other = probe == x ? y : x;
    for (String w : probe) {
      if (other.contains(w)) {
        common++;
      }
    }
    return common >= MATCH * (x.size() + y.size() - common);
  }

  private static double ratio(int part, int whole) {
    return whole == 0 ? Double.NaN : (double) part / whole;
  }
}
