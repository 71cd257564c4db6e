package dev.quarry.ingest;

import java.util.ArrayList;
import java.util.List;

/**
 * One table as a rectangular grid of cells, built under its conversion's {@link IngestBudget}, and
 * its rendering as a GitHub-style Markdown table (the way docs/CONTRACT.md gives tables): the first
 * row is the header, cells are trimmed, pipes escaped, newlines made spaces, and every row as wide
 * as the widest. Every converter lays its tables out here and nowhere else.
 *
 * <p>Why one class: what a table costs is not what its source says but its rows times its widest
 * row, once spans are repeated into every slot they cover and short rows are padded. Each converter
 * used to build that on its own and check what it output, after the grid was built: a 49 KB HTML
 * table of {@code colspan=1000 rowspan=65535} cells, a docling grid of one wide row and 60,000 empty
 * ones, a 977-byte DOCX row with {@code w:gridBefore} of 1,500,000,000 took the heap first. Here the
 * grid's padded size is checked against the budget's per-table limit before it grows, every cell it
 * grows by is charged to the document's budget, the slots a span writes are counted (so overlapping
 * spans cannot loop past the limit either), and rendering is checked before its text is built.
 */
final class TableGrid {
  /** Slot writes a grid may take per cell it may have: spans that overlap write a slot twice. */
  private static final int WRITES_PER_CELL = 4;

  private final IngestBudget budget;
  private final long limit;
  /** Rows as built: a row may be shorter than the grid (padded when rendered); null is no cell. */
  private final List<List<String>> rows = new ArrayList<>();
  private int width;
  private long writes;

  TableGrid(IngestBudget budget) {
    this.budget = budget;
    this.limit = budget.tableCellLimit();
  }

  int rowCount() {
    return rows.size();
  }

  int width() {
    return width;
  }

  /**
   * Makes the grid at least {@code rowCount} rows by {@code columns} columns. The padded size is
   * checked first and the cells it adds are charged: nothing is allocated past the limit.
   */
  void ensure(long rowCount, long columns) {
    long newRows = Math.max(rows.size(), rowCount);
    long newWidth = Math.max(width, columns);
    long after = IngestBudget.saturatedTimes(newRows, newWidth);
    if (after > limit) {
      throw budget.tableTooLarge(newRows, newWidth);
    }
    long before = (long) rows.size() * width;
    if (after > before) {
      budget.cells(after - before);
    }
    while (rows.size() < newRows) {
      rows.add(new ArrayList<>());
    }
    width = (int) newWidth;
  }

  /** Adds an empty row at the bottom; returns its index. */
  int addRow() {
    ensure(rows.size() + 1L, width);
    return rows.size() - 1;
  }

  /** Adds a row holding {@code cells}, in order. */
  void addRow(List<String> cells) {
    int r = addRow();
    for (String cell : cells) {
      append(r, cell, 1);
    }
  }

  /**
   * Appends {@code text} to row {@code r} as its next {@code times} cells (a span repeated, or
   * padding before the row's first cell). The row's new width is checked before any is written.
   */
  void append(int r, String text, long times) {
    List<String> row = rows.get(r);
    ensure(rows.size(), row.size() + Math.max(0, times));
    for (long i = 0; i < times; i++) {
      countWrite();
      row.add(text);
    }
  }

  /** The cell at row {@code r}, column {@code c}, or null when nothing was written there. */
  String get(int r, int c) {
    List<String> row = rows.get(r);
    return c < row.size() ? row.get(c) : null;
  }

  /** The number of cells written into row {@code r} so far, holes included. */
  int rowLength(int r) {
    return rows.get(r).size();
  }

  /** Writes {@code text} at row {@code r}, column {@code c} unless a cell is there; whether it did. */
  boolean setIfAbsent(int r, int c, String text) {
    ensure(r + 1L, c + 1L);
    countWrite();
    List<String> row = rows.get(r);
    if (c < row.size() && row.get(c) != null) {
      return false;
    }
    place(row, c, text);
    return true;
  }

  /** Writes {@code text} at row {@code r}, column {@code c}, over whatever was there. */
  void set(int r, int c, String text) {
    ensure(r + 1L, c + 1L);
    countWrite();
    place(rows.get(r), c, text);
  }

  private static void place(List<String> row, int c, String text) {
    while (row.size() <= c) {
      row.add(null);
    }
    row.set(c, text);
  }

  private void countWrite() {
    if (++writes > WRITES_PER_CELL * limit) {
      throw budget.tableTooLarge(rows.size(), width);
    }
    if ((writes & 1023) == 0) {
      budget.tick();
    }
  }

  /** The grid as rows of equal width, an empty string where no cell was written. */
  List<List<String>> rectangle() {
    List<List<String>> out = new ArrayList<>(rows.size());
    for (List<String> row : rows) {
      List<String> cells = new ArrayList<>(width);
      for (int c = 0; c < width; c++) {
        String s = c < row.size() ? row.get(c) : null;
        cells.add(s == null ? "" : s);
      }
      out.add(cells);
    }
    return out;
  }

  /** The grid as a Markdown table, its rows in order; empty when it has no cell. */
  String markdown() {
    return render(budget, rows);
  }

  /** The rows {@code keep} says, as a Markdown table (a row no cell reaches can be left out). */
  String markdown(java.util.function.IntPredicate keep) {
    List<List<String>> kept = new ArrayList<>();
    for (int r = 0; r < rows.size(); r++) {
      if (keep.test(r)) {
        kept.add(rows.get(r));
      }
    }
    return render(budget, width, kept);
  }

  /**
   * {@code rows} (of any widths: a converter's grid made elsewhere, a continued table joined) as a
   * Markdown table: their padded size is checked against the budget and charged before rendering.
   */
  static String markdown(IngestBudget budget, List<List<String>> rows) {
    TableGrid grid = new TableGrid(budget);
    long widest = 0;
    for (List<String> r : rows) {
      widest = Math.max(widest, r.size());
    }
    grid.ensure(rows.size(), widest);
    return render(budget, rows);
  }

  private static String render(IngestBudget budget, List<List<String>> rows) {
    int cols = 0;
    for (List<String> r : rows) {
      cols = Math.max(cols, r.size());
    }
    return render(budget, cols, rows);
  }

  private static String render(IngestBudget budget, int cols, List<List<String>> rows) {
    if (rows.isEmpty() || cols == 0) {
      return "";
    }
    // What the Markdown will take, counted before it is built: a huge cell repeated by a span is
    // one string many times in the grid, but its copies are real in the text.
    long length = 4L * cols + 2;
    for (List<String> r : rows) {
      length += 2 + 3L * cols;
      for (String cell : r) {
        length += renderedLength(cell);
      }
      if (length > Integer.MAX_VALUE / 2) {
        break;
      }
    }
    budget.text(length, "a table's Markdown");
    StringBuilder sb = new StringBuilder((int) Math.min(length, 1 << 20));
    appendRow(sb, rows.get(0), cols);
    sb.append('|');
    for (int c = 0; c < cols; c++) {
      sb.append("---|");
    }
    sb.append('\n');
    for (int i = 1; i < rows.size(); i++) {
      appendRow(sb, rows.get(i), cols);
    }
    sb.setLength(sb.length() - 1);
    return sb.toString();
  }

  /**
   * Whether {@code line} is a Markdown table's rule, the line under its header: cells of at least
   * {@code minDashes} dashes (a colon either side for alignment, spaces around) between pipes, with
   * a pipe at each end when {@code piped}. A scan, not a regular expression: the expressions this
   * replaces recursed once a column, and the rule of a table thousands of columns wide overflowed
   * the stack where nothing caught it (a 500 on the ingest).
   */
  static boolean isRule(String line, int minDashes, boolean piped) {
    int n = line.length();
    int i = 0;
    boolean leading = n > 0 && line.charAt(0) == '|';
    if (piped && !leading) {
      return false;
    }
    if (leading) {
      i++;
    }
    while (true) {
      while (i < n && isSpace(line.charAt(i))) {
        i++;
      }
      if (i < n && line.charAt(i) == ':') {
        i++;
      }
      int dashes = 0;
      while (i < n && line.charAt(i) == '-') {
        dashes++;
        i++;
      }
      if (dashes < minDashes) {
        return false;
      }
      if (i < n && line.charAt(i) == ':') {
        i++;
      }
      while (i < n && isSpace(line.charAt(i))) {
        i++;
      }
      if (i == n) {
        return !piped;
      }
      if (line.charAt(i) != '|') {
        return false;
      }
      i++;
      if (i == n) {
        return true;
      }
    }
  }

  /** What a regular expression's {@code \s} is. */
  private static boolean isSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\u000B' || c == '\f' || c == '\r';
  }

  private static long renderedLength(String cell) {
    if (cell == null) {
      return 0;
    }
    long n = cell.length();
    for (int i = 0; i < cell.length(); i++) {
      if (cell.charAt(i) == '|') {
        n++;
      }
    }
    return n;
  }

  private static void appendRow(StringBuilder sb, List<String> cells, int cols) {
    sb.append('|');
    for (int c = 0; c < cols; c++) {
      sb.append(' ').append(c < cells.size() ? clean(cells.get(c)) : "").append(" |");
    }
    sb.append('\n');
  }

  private static String clean(String cell) {
    if (cell == null) {
      return "";
    }
    return cell.replace("\r", " ").replace("\n", " ").replace("|", "\\|").strip();
  }
}
