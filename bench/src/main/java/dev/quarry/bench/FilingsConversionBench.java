package dev.quarry.bench;

import dev.quarry.ingest.Converter;
import dev.quarry.store.DocItem;
import dev.quarry.ingest.PdfConverter;
import io.vertx.core.json.JsonObject;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.pdfbox.Loader;
import org.apache.pdfbox.pdmodel.PDDocument;

/**
 * What PDF conversion makes of the filings in {@code shared/data/filings/pdfs}: per filing its
 * pages, tables, tables whose first row is a header (text over the figure columns, not figures),
 * seconds per page, and, for each question's evidence page, the share of the evidence's figures
 * (the numbers in {@code evidence_text}) found in the cells of that page's tables.
 *
 * <p>With {@code -Dbench.conversion.baseline=DIR} (classes of another build of the ingest package,
 * which {@code scripts/bench.sh} compiles from {@code QUARRY_CONVERSION_BASELINE_REF}) the same
 * figures are measured for that converter too, filing by filing in turns with this one, in the
 * same run. {@code -Dbench.filings=A,B} narrows a run.
 */
public final class FilingsConversionBench {
  private static final Pattern NUMBER = Pattern.compile("\\d[\\d,]*(\\.\\d+)?");
  private static final Pattern FIGURE_CELL = Pattern.compile("[($\\-—–]*\\$?\\s?\\d[\\d,.]*\\)?%?");
  private static final Pattern YEAR = Pattern.compile("(19|20)\\d\\d");

  private final BenchPaths paths;

  public FilingsConversionBench(BenchPaths paths) {
    this.paths = paths;
  }

  private record Evidence(String doc, int page, List<String> figures) {}

  /** One converter's figures for one filing. */
  private record Result(int pages, int tables, int withHeader, double seconds, int figures,
      int found, List<FilingStatements.Statement> statements) {
    long statementsOneTable() {
      return statements.stream().filter(FilingStatements.Statement::oneTable).count();
    }

    /** One table whose header row names the periods (or, for equity, the columns). */
    long statementsWellFormed() {
      return statements.stream().filter(s -> s.oneTable() && (s.periodHeaders() == 1
          || s.headers() == 1 && s.title().toLowerCase(Locale.ROOT).contains("equity"))).count();
    }

    long statementsSplit() {
      return statements.stream().filter(s -> s.tables() > 1).count();
    }

    long statementsOverPages() {
      return statements.stream().filter(s -> s.pages().size() > 1).count();
    }
  }

  public String run() throws Exception {
    Path dir = paths.sharedData().resolve("filings");
    List<Path> pdfs;
    try (Stream<Path> s = Files.list(dir.resolve("pdfs"))) {
      pdfs = s.filter(p -> p.toString().endsWith(".pdf")).sorted().toList();
    }
    String only = System.getProperty("bench.filings", "");
    if (!only.isBlank()) {
      List<String> names = List.of(only.split(","));
      pdfs = pdfs.stream().filter(p -> names.contains(name(p))).toList();
    }
    List<Evidence> evidence = new ArrayList<>();
    for (String line : Files.readAllLines(dir.resolve("questions.jsonl"))) {
      if (line.isBlank()) {
        continue;
      }
      JsonObject q = new JsonObject(line);
      for (Object e : q.getJsonArray("evidence")) {
        JsonObject ev = (JsonObject) e;
        evidence.add(new Evidence(q.getString("doc_name"), ev.getInteger("evidence_page_num") + 1,
            numbers(ev.getString("evidence_text"))));
      }
    }
    Converter current = new PdfConverter();
    Converter baseline = baseline();
    Map<String, Result> after = new LinkedHashMap<>();
    Map<String, Result> before = new LinkedHashMap<>();
    for (Path pdf : pdfs) {
      byte[] bytes = Files.readAllBytes(pdf);
      List<Evidence> mine = evidence.stream().filter(e -> e.doc().equals(name(pdf))).toList();
      if (baseline != null) {
        before.put(name(pdf), measure(baseline, pdf, bytes, mine));
      }
      after.put(name(pdf), measure(current, pdf, bytes, mine));
      System.out.printf(Locale.ROOT, "%s: %s%n", name(pdf), after.get(name(pdf)));
    }
    return report(after, before);
  }

  private static String name(Path pdf) {
    return pdf.getFileName().toString().replaceFirst("\\.pdf$", "");
  }

  /** The converter of another build, its ingest classes loaded apart from this one's. */
  private static Converter baseline() throws Exception {
    String dir = System.getProperty("bench.conversion.baseline", "");
    if (dir.isBlank()) {
      return null;
    }
    ClassLoader parent = FilingsConversionBench.class.getClassLoader();
    // The types both sides share (the converter's interface and its results) come from this
    // build; every other ingest class from the baseline's, so it runs its own layout code.
    Pattern shared = Pattern.compile(
        "dev\\.quarry\\.ingest\\.(Converter|ConvertedDocument|DocItem|IngestException|SourceType)\\b.*");
    URLClassLoader loader = new URLClassLoader(new URL[] {Path.of(dir).toUri().toURL()}, parent) {
      @Override
      protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        if (name.startsWith("dev.quarry.ingest.") && !shared.matcher(name).matches()) {
          synchronized (getClassLoadingLock(name)) {
            Class<?> c = findLoadedClass(name);
            if (c != null) {
              return c;
            }
            try {
              return findClass(name);
            } catch (ClassNotFoundException e) {
              // Not compiled for the baseline (bench.sh compiles only its Pdf* sources and what
              // they reach): this build's class serves.
            }
          }
        }
        return super.loadClass(name, resolve);
      }
    };
    return (Converter) loader.loadClass("dev.quarry.ingest.PdfConverter").getDeclaredConstructor()
        .newInstance();
  }

  private static Result measure(Converter converter, Path pdf, byte[] bytes,
      List<Evidence> evidence) throws Exception {
    int pages;
    try (PDDocument d = Loader.loadPDF(pdf.toFile())) {
      pages = d.getNumberOfPages();
    }
    long start = System.nanoTime();
    List<DocItem> items = converter.convert(pdf.getFileName().toString(), bytes).items();
    double seconds = (System.nanoTime() - start) / 1e9;
    int tables = 0;
    int withHeader = 0;
    for (DocItem i : items) {
      if (i.label().equals("table")) {
        tables++;
        withHeader += hasHeader(i.text()) ? 1 : 0;
      }
    }
    int figures = 0;
    int found = 0;
    for (Evidence e : evidence) {
      Set<String> inTables = new HashSet<>();
      for (DocItem i : items) {
        if (i.label().equals("table") && i.pageNumbers().contains(e.page())) {
          inTables.addAll(numbers(i.text()));
        }
      }
      figures += e.figures().size();
      for (String f : e.figures()) {
        found += inTables.contains(f) ? 1 : 0;
      }
    }
    List<FilingStatements.Statement> statements = FilingStatements.find(items);
    for (FilingStatements.Statement s : statements) {
      System.out.printf(Locale.ROOT, "  statement p%s: %d table(s), %d with a header, %d naming"
          + " periods, %d over pages: %s%n", s.pages(), s.tables(), s.headers(), s.periodHeaders(),
          s.multiPageTables(), s.title());
    }
    return new Result(pages, tables, withHeader, seconds, figures, found, statements);
  }

  /** The numbers of a text, without thousands separators; single digits are left out. */
  private static List<String> numbers(String text) {
    List<String> out = new ArrayList<>();
    Matcher m = NUMBER.matcher(text);
    while (m.find()) {
      String n = m.group().replace(",", "");
      if (n.replace(".", "").length() >= 2) {
        out.add(n);
      }
    }
    return out;
  }

  /**
   * Whether a Markdown table's first row is a header: some cell past the first holds text, and
   * none of them is a figure other than a year.
   */
  static boolean hasHeader(String markdown) {
    String first = markdown.split("\n")[0].strip();
    String[] cells = first.substring(1, first.length() - 1).split("(?<!\\\\)\\|", -1);
    boolean text = false;
    for (int c = 1; c < cells.length; c++) {
      String cell = cells[c].strip();
      if (cell.isEmpty()) {
        continue;
      }
      if (FIGURE_CELL.matcher(cell).matches() && !YEAR.matcher(cell).matches()) {
        return false;
      }
      text = true;
    }
    return text;
  }

  private static String report(Map<String, Result> after, Map<String, Result> before) {
    StringBuilder sb = new StringBuilder();
    boolean both = !before.isEmpty();
    sb.append(both
        ? "Before: the converter of `QUARRY_CONVERSION_BASELINE_REF` (" + System.getProperty(
            "bench.conversion.baseline.ref", "baseline") + "); after: this checkout's. Both"
            + " convert each filing in turn, in the same run.\n\n"
        : "This checkout's converter only (no `QUARRY_CONVERSION_BASELINE_REF` given).\n\n");
    sb.append("| filing | pages | tables | with a header row | s / page | evidence figures in"
        + " its page's tables |\n|---|---:|---:|---:|---:|---:|\n");
    Result total = null;
    Result totalBefore = null;
    for (Map.Entry<String, Result> e : after.entrySet()) {
      Result a = e.getValue();
      Result b = before.get(e.getKey());
      sb.append("| ").append(e.getKey()).append(" | ").append(a.pages()).append(" | ")
          .append(pair(b == null ? null : (double) b.tables(), a.tables(), "%.0f")).append(" | ")
          .append(pair(b == null ? null : (double) b.withHeader(), a.withHeader(), "%.0f"))
          .append(" | ").append(pair(b == null ? null : b.seconds() / b.pages(),
              a.seconds() / a.pages(), "%.3f"))
          .append(" | ").append(share(b, a)).append(" |\n");
      total = add(total, a);
      totalBefore = b == null ? null : add(totalBefore, b);
    }
    if (total != null) {
      sb.append("| **all** | ").append(total.pages()).append(" | ")
          .append(pair(totalBefore == null ? null : (double) totalBefore.tables(), total.tables(), "%.0f"))
          .append(" | ").append(pair(totalBefore == null ? null : (double) totalBefore.withHeader(),
              total.withHeader(), "%.0f"))
          .append(" | ").append(pair(totalBefore == null ? null
              : totalBefore.seconds() / totalBefore.pages(), total.seconds() / total.pages(), "%.3f"))
          .append(" | ").append(share(totalBefore, total)).append(" |\n");
    }
    sb.append("\n### The financial statements\n\nEvery primary statement of the ten filings,"
        + " found from the items (`FilingStatements`: an item titled like \"Consolidated"
        + " Statements of Cash Flows\", a company name before it allowed, and the tables up to the"
        + " next heading that is not its \"(continued)\"). One table: the statement is one table"
        + " item (over several pages, one item listing them all). Well formed: one table whose"
        + " header row names the periods (for a statement of equity, whose columns are its"
        + " components, a header row). Split: more than one table.\n\n");
    sb.append("| filing | statements | over two pages or more | one table | well formed | split |\n"
        + "|---|---:|---:|---:|---:|---:|\n");
    Result all = null;
    Result allBefore = null;
    for (Map.Entry<String, Result> e : after.entrySet()) {
      Result a = e.getValue();
      Result b = before.get(e.getKey());
      sb.append("| ").append(e.getKey()).append(" | ").append(statementCells(b, a)).append(" |\n");
      all = add(all, a);
      allBefore = b == null ? null : add(allBefore, b);
    }
    if (all != null) {
      sb.append("| **all** | ").append(statementCells(allBefore, all)).append(" |\n");
    }
    sb.append("\nCells read \"before → after\". Evidence figures: the numbers of two digits or"
        + " more in each question's `evidence_text`, found among the numbers of the table cells on"
        + " its evidence page (a figure in a text item does not count). s / page: conversion"
        + " alone (PDFBox and layout), without chunking or embedding.\n");
    return sb.toString();
  }

  private static String statementCells(Result b, Result a) {
    return String.join(" | ",
        pair(b == null ? null : (double) b.statements().size(), a.statements().size(), "%.0f"),
        pair(b == null ? null : (double) b.statementsOverPages(), a.statementsOverPages(), "%.0f"),
        pair(b == null ? null : (double) b.statementsOneTable(), a.statementsOneTable(), "%.0f"),
        pair(b == null ? null : (double) b.statementsWellFormed(), a.statementsWellFormed(), "%.0f"),
        pair(b == null ? null : (double) b.statementsSplit(), a.statementsSplit(), "%.0f"));
  }

  private static Result add(Result t, Result r) {
    if (t == null) {
      return r;
    }
    List<FilingStatements.Statement> statements = new ArrayList<>(t.statements());
    statements.addAll(r.statements());
    return new Result(t.pages() + r.pages(), t.tables() + r.tables(),
        t.withHeader() + r.withHeader(), t.seconds() + r.seconds(), t.figures() + r.figures(),
        t.found() + r.found(), statements);
  }

  private static String pair(Double before, double after, String format) {
    String a = String.format(Locale.ROOT, format, after);
    return before == null ? a : String.format(Locale.ROOT, format, before) + " → " + a;
  }

  private static String share(Result before, Result after) {
    if (after.figures() == 0) {
      return "–";
    }
    String a = String.format(Locale.ROOT, "%d/%d (%.0f%%)", after.found(), after.figures(),
        100.0 * after.found() / after.figures());
    return before == null ? a : String.format(Locale.ROOT, "%.0f%%", 100.0 * before.found()
        / before.figures()) + " → " + a;
  }
}
