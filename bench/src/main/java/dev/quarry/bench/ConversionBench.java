package dev.quarry.bench;

import dev.quarry.ingest.ConversionReport;
import dev.quarry.ingest.Converters;
import dev.quarry.ingest.IngestException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code ./quarry bench conversion}: how close what ingestion stores comes to a reference, in
 * parts. Each part is a heading and its figures; the command runs every part of {@link #PARTS} in
 * order, so a new measure (the filings' financial tables) is one more entry there.
 */
public final class ConversionBench {
  /** One part of the benchmark: its heading and a Markdown body with its figures. */
  interface Part {
    String title();

    String run(BenchPaths paths) throws Exception;
  }

  /** The parts, in the order they are run and written. */
  static final List<Part> PARTS = List.of(new DoclingPairs());

  private final BenchPaths paths;

  public ConversionBench(BenchPaths paths) {
    this.paths = paths;
  }

  public String run() throws Exception {
    StringBuilder out = new StringBuilder();
    for (Part part : PARTS) {
      out.append("### ").append(part.title()).append("\n\n").append(part.run(paths)).append('\n');
    }
    return out.toString();
  }

  /**
   * Every docling pair in {@code shared/data/docling}, converted by {@link Converters#convertClean}
   * (what {@code IngestService} stores: sniffing, the converter, {@code TextHygiene}), compared with
   * docling's reference by {@link ConversionReport}.
   */
  static final class DoclingPairs implements Part {
    @Override
    public String title() {
      return "Docling reference pairs";
    }

    /** Sums over files, for one format or all. */
    private static final class Totals {
      int files;
      int refused;
      int common;
      int tokens;
      int referenceTokens;
      int aligned;
      int alignable;
      int sameLabel;
      int samePages;
      int paged;
      int headers;
      int sameLevel;
      int referenceTables;
      int tables;
      int rightShape;
      int orderedPairs;
      int sameOrder;
      double seconds;

      void add(ConversionReport r, double s) {
        files++;
        common += r.commonTokens();
        tokens += r.tokens();
        referenceTokens += r.referenceTokens();
        aligned += r.aligned();
        alignable += r.alignable();
        sameLabel += r.sameLabel();
        samePages += r.samePages();
        paged += r.pagedAligned();
        headers += r.referenceHeaders();
        sameLevel += r.sameHeadingLevel();
        orderedPairs += r.orderedHeaderPairs();
        sameOrder += r.sameHeaderOrder();
        referenceTables += r.referenceTableShapes().size();
        tables += r.tableShapes().size();
        rightShape += r.rightShapeTables();
        seconds += s;
      }

      String row(String name) {
        return String.format(Locale.ROOT, "| %s | %d | %d | %s | %s | %s | %s | %d / %d / %d | %s | %s | %s | %.2f |%n",
            name, files, refused, pct(common, referenceTokens), pct(common, tokens), pct(aligned, alignable),
            pct(sameLabel, aligned), referenceTables, tables, rightShape, pct(samePages, paged),
            pct(sameLevel, headers), pct(sameOrder, orderedPairs), seconds);
      }
    }

    @Override
    public String run(BenchPaths paths) {
      Converters converters = new Converters(Long.MAX_VALUE);
      Path docling = paths.sharedData().resolve("docling");
      Map<String, Totals> byFormat = new LinkedHashMap<>();
      Totals all = new Totals();
      StringBuilder files = new StringBuilder("| file | items / ref | recall | precision | items found | labels"
          + " | tables ref / ours / right shape | pages | heading levels | heading order | label confusions (ours->docling) |\n"
          + "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---|\n");
      for (Path source : ConversionReport.pairs(docling)) {
        String format = source.getParent().getFileName().toString();
        String name = format + "/" + source.getFileName();
        Totals t = byFormat.computeIfAbsent(format, f -> new Totals());
        long start = System.nanoTime();
        try {
          ConversionReport r = ConversionReport.ingested(converters, source);
          double s = (System.nanoTime() - start) / 1e9;
          t.add(r, s);
          all.add(r, s);
          files.append(String.format(Locale.ROOT, "| %s | %d / %d | %s | %s | %s | %s | %d / %d / %d | %s | %s | %s | %s |%n",
              name, r.items(), r.referenceItems(), pct(r.commonTokens(), r.referenceTokens()),
              pct(r.commonTokens(), r.tokens()), pct(r.aligned(), r.alignable()), pct(r.sameLabel(), r.aligned()),
              r.referenceTableShapes().size(), r.tableShapes().size(), r.rightShapeTables(),
              pct(r.samePages(), r.pagedAligned()), pct(r.sameHeadingLevel(), r.referenceHeaders()),
              pct(r.sameHeaderOrder(), r.orderedHeaderPairs()),
              r.labelConfusions().isEmpty() ? "" : r.labelConfusions().toString()));
          System.out.println(r.summary());
        } catch (IngestException e) {
          t.files++;
          t.refused++;
          all.files++;
          all.refused++;
          files.append("| ").append(name).append(" | refused: ").append(e.reason().name().toLowerCase(Locale.ROOT))
              .append(" | | | | | | | | | ").append(e.getMessage().replace("|", "\\|")).append(" |\n");
          System.out.println(name + ": refused: " + e.getMessage());
        }
      }
      StringBuilder out = new StringBuilder();
      out.append("Every source in `shared/data/docling` against docling's reference for it (its DoclingDocument"
          + " JSON, or for `md/mixed.md`, `md/wiki.md` and `docling-json/2206.01062.json` docling's Markdown export"
          + " read by Quarry's Markdown converter). Converted through `Converters.convertClean`, the call"
          + " `IngestService` stores the result of (sniffing, the converter, `TextHygiene`). Recall and"
          + " precision are over word tokens (NFKC, lower case), pictures left out; items are aligned in order"
          + " (an item matches when half its distinct words are shared); labels, pages and heading levels are"
          + " agreement over aligned items (pages where the reference has pages, heading levels over docling's"
          + " section headers; – where there is nothing to compare); heading order: over consecutive aligned"
          + " headers whose levels differ in docling's reference, the share whose levels differ the same way"
          + " here (docling puts every PDF header at level 1, so a PDF whose depth Quarry reads from its"
          + " numbering loses exact levels but has no order to get wrong: –); a table has the"
          + " right shape when docling has one of the same rows × columns. Per format, sums over its files.\n\n");
      out.append("| format | files | refused | recall | precision | items found | labels"
          + " | tables ref / ours / right shape | pages | heading levels | heading order | seconds |\n"
          + "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|\n");
      byFormat.forEach((f, t) -> out.append(t.row(f)));
      out.append(all.row("all"));
      out.append("\n").append(files);
      return out.toString();
    }

    private static String pct(int part, int whole) {
      return whole == 0 ? "–" : String.format(Locale.ROOT, "%.1f%%", 100.0 * part / whole);
    }
  }
}
