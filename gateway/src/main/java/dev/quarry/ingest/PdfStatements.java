package dev.quarry.ingest;

import dev.quarry.ingest.PdfLayout.Line;
import dev.quarry.ingest.PdfLayout.Table;
import dev.quarry.ingest.PdfLayout.Word;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Tables of figures drawn without a grid: the financial statements of filings and reports. Such
 * a table is a block of rows whose right part holds figures aligned in columns, set apart from
 * the row's label by a wide gap; the lines above it whose text sits over those columns are its
 * header (the periods: years, quarters, dates). Each row of the page is one row of the table, so
 * two line items never share a row; a currency sign and the brackets of a negative figure stay in
 * the figure's cell; a label that wraps onto a second line joins its row.
 */
final class PdfStatements {
  /** A figure: 4,869 (56) 12.5% $1,234 (1.2)% or a dash for nil. */
  private static final Pattern FIGURE = Pattern.compile(
      "[(\\[]?[-−–]?[$€£¥]?[(]?\\d[\\d,]*(\\.\\d+)?[)]?%?[)\\]]?|[—–−-]{1,3}|n/?[ma]");
  private static final Pattern SIGN = Pattern.compile("[$€£¥]|US\\$");
  private static final Pattern CLOSER = Pattern.compile("[)%]+|\\)%");
  /** A footnote's marker after a figure: "2.04 (c)". */
  private static final Pattern MARKER = Pattern.compile("\\([a-z]{1,2}\\)");
  private static final Pattern YEAR = Pattern.compile("(19|20)\\d\\d");

  private PdfStatements() {}

  /** One figure cell of a row: its text ("$ 4,869", "(56)") and extent. */
  private record Cell(String text, float x0, float x1) {}

  /** A row of the page: its lines, the label's words and the figure cells at its right. */
  private record Row(List<Line> lines, List<Word> label, List<Cell> cells, float baseline,
      float size) {
    boolean figures() {
      return !cells.isEmpty();
    }

    /**
     * Figures that are all years, with no label or a short one ("Years Ended December 31,"): a
     * header row of periods, not a line item.
     */
    boolean yearsOnly() {
      return label.size() <= 8 && cells.stream().allMatch(c -> YEAR.matcher(c.text()).matches());
    }

    float x0() {
      return lines.get(0).box().x0();
    }

    float x1() {
      float x = 0;
      for (Line l : lines) {
        x = Math.max(x, l.box().x1());
      }
      return x;
    }

    /** The label's right end; 0 without a label. */
    float labelX1() {
      float x = 0;
      for (Word w : label) {
        x = Math.max(x, w.box().x1());
      }
      return x;
    }

    /**
     * This row with the figures that end left of {@code labelRight} read as label words: the last
     * part of a wrapped label ("($7)" under "net of tax of ($3), $2 and") is no figure cell.
     */
    Row relabelled(float labelRight) {
      if (cells.isEmpty() || cells.get(0).x1() > labelRight) {
        return this;
      }
      List<Word> words = new ArrayList<>();
      for (Line l : lines) {
        for (Word w : l.words()) {
          if (w.box().x1() <= labelRight) {
            words.add(w);
          }
        }
      }
      words.sort(Comparator.comparingDouble(w -> w.box().x0()));
      List<Cell> kept = cells.stream().filter(c -> c.x1() > labelRight).toList();
      return new Row(lines, List.copyOf(words), kept, baseline, size);
    }
  }

  /** Finds statement tables among {@code lines} and removes the lines they hold. */
  static List<Table> find(List<Line> lines, List<PdfPageReader.Ruling> rulings) {
    List<Row> rows = rows(outsideGrids(lines, rulings));
    List<Table> tables = new ArrayList<>();
    int i = 0;
    while (i < rows.size()) {
      if (!rows.get(i).figures() || rows.get(i).yearsOnly()) {
        i++;
        continue;
      }
      // A run of figure rows, with short label rows (section labels, wrapped labels) among them.
      int end = i + 1;
      float labelRight = 0;
      int lastFigures = i;
      int figureRows = 1;
      while (end < rows.size() && end - lastFigures <= 4
          && rows.get(end).baseline() - rows.get(end - 1).baseline()
              <= 3.2f * Math.max(rows.get(end).size(), rows.get(end - 1).size())
          && (rows.get(end).figures() || shortLabel(rows.get(end)))) {
        if (rows.get(end).figures()) {
          lastFigures = end;
          figureRows++;
        }
        end++;
      }
      // Labels of figure rows end left of every figure column: what lies left of the longest one
      // is label text, wherever a row's words would put it.
      for (int r = i; r <= lastFigures; r++) {
        if (rows.get(r).figures() && !rows.get(r).label().isEmpty()) {
          labelRight = Math.max(labelRight, rows.get(r).labelX1());
        }
      }
      for (int r = i; r <= lastFigures; r++) {
        rows.set(r, rows.get(r).relabelled(labelRight));
      }
      // Label rows keep to the label area: a line of prose across the columns ends the table.
      List<float[]> columns = columns(rows.subList(i, lastFigures + 1));
      if (!columns.isEmpty()) {
        float left = columns.get(0)[0];
        for (int r = i + 1; r <= lastFigures; r++) {
          Row row = rows.get(r);
          if (!row.figures() && row.x1() > left + row.size()) {
            figureRows = 0;
            for (int k = i; k < r; k++) {
              if (rows.get(k).figures()) {
                lastFigures = k;
                figureRows++;
              }
            }
            break;
          }
        }
      }
      Table t = figureRows >= 3 ? table(rows, i, lastFigures + 1, lines) : null;
      if (t != null) {
        tables.add(t);
      }
      i = lastFigures + 1;
    }
    return tables;
  }

  /**
   * The lines not inside a grid of rulings whose rows are drawn too: those tables are ruled. A
   * grid of column rules alone, with many text rows between two horizontal rules, is a
   * statement with column separators, and stays here.
   */
  private static List<Line> outsideGrids(List<Line> lines, List<PdfPageReader.Ruling> rulings) {
    List<PdfRect> grids = new ArrayList<>();
    for (List<PdfPageReader.Ruling> c : PdfLayout.components(rulings)) {
      java.util.Set<Integer> xs = new java.util.HashSet<>();
      java.util.Set<Integer> ys = new java.util.HashSet<>();
      PdfRect box = null;
      for (PdfPageReader.Ruling r : c) {
        (r.horizontal() ? ys : xs).add(Math.round(r.pos() / 3));
        PdfRect rb = r.horizontal() ? new PdfRect(r.from(), r.pos(), r.to(), r.pos())
            : new PdfRect(r.pos(), r.from(), r.pos(), r.to());
        box = box == null ? rb : box.union(rb);
      }
      java.util.Set<Integer> fullWidth = new java.util.HashSet<>();
      for (PdfPageReader.Ruling r : c) {
        if (r.horizontal() && r.to() - r.from() >= 0.9f * box.width()) {
          fullWidth.add(Math.round(r.pos() / 3));
        }
      }
      if (rowsRunOutside(box, lines)) {
        continue; // rules under a statement's figure columns, its labels outside them
      }
      if (fullWidth.size() >= 3) {
        grids.add(box); // top, middle and bottom rules across the table: a booktabs table
      } else if (xs.size() >= 3 && ys.size() >= 2) {
        java.util.Set<Integer> baselines = new java.util.HashSet<>();
        for (Line l : lines) {
          if (box.contains(l.box().centerX(), l.box().centerY())) {
            baselines.add(Math.round(l.baseline() / 2));
          }
        }
        if (ys.size() - 1 >= 0.6f * baselines.size()) {
          grids.add(box);
        }
      }
    }
    if (grids.isEmpty()) {
      return lines;
    }
    List<Line> out = new ArrayList<>();
    for (Line l : lines) {
      if (grids.stream().noneMatch(g -> g.contains(l.box().centerX(), l.box().centerY()))) {
        out.add(l);
      }
    }
    return out;
  }

  /** Whether text on the baseline of a line inside {@code box} lies outside it. */
  private static boolean rowsRunOutside(PdfRect box, List<Line> lines) {
    List<Float> inside = new ArrayList<>();
    for (Line l : lines) {
      if (box.contains(l.box().centerX(), l.box().centerY())) {
        inside.add(l.baseline());
      }
    }
    for (Line l : lines) {
      if (!box.contains(l.box().centerX(), l.box().centerY())
          && l.baseline() >= box.top() - 2 && l.baseline() <= box.bottom() + 2
          && (l.box().x1() < box.x0() || l.box().x0() > box.x1())) {
        for (float b : inside) {
          if (Math.abs(b - l.baseline()) <= Math.max(2, 0.3f * l.size())) {
            return true;
          }
        }
      }
    }
    return false;
  }

  /**
   * A row that may stand among a statement's figure rows: a section label or one line of a wrapped
   * label (line items of 30 words exist: "Amortization of prior service credits included in …").
   * Prose across the columns is cut off afterwards, once the columns are known.
   */
  private static boolean shortLabel(Row r) {
    return r.label().size() <= 30 && r.lines().size() <= 2;
  }

  private static Table table(List<Row> rows, int from, int to, List<Line> lines) {
    List<float[]> columns = columns(rows.subList(from, to));
    if (columns.isEmpty()) {
      return null;
    }
    float left = columns.get(0)[0];
    float size = rows.get(from).size();
    int labelled = 0;
    int figureRows = 0;
    for (int r = from; r < to; r++) {
      if (rows.get(r).figures()) {
        figureRows++;
        labelled += rows.get(r).label().isEmpty() ? 0 : 1;
      }
    }
    if (columns.size() < 2 && labelled < figureRows) {
      return null; // a single column of bare numbers: a list, not a statement
    }
    // The header: rows just above whose text lies over the columns (periods, dates, units).
    // Section labels ("Revenue:", "Cash flows from operating activities:") may stand between the
    // header and the first figures; they are rows of the table when a header is found above them.
    int labels = 0;
    while (labels < 2 && from - labels > 0 && headerAbove(rows, from - labels, left, size)
        && !rows.get(from - labels - 1).figures()
        && rows.get(from - labels - 1).x1() <= left - size) {
      labels++;
    }
    int top = from - labels;
    Body body = body(rows.subList(from, to), left);
    while (top > 0 && from - labels - top < 6 && headerAbove(rows, top, left, size)
        && headerLike(rows.get(top - 1), left, size, body)
        && (top == from - labels || headerLines(rows.get(top - 1), rows.get(top)))) {
      top--;
    }
    if (top == from - labels) {
      top = from;
      labels = 0;
    }
    int headerEnd = from - labels;
    from = headerEnd;
    List<Line> used = new ArrayList<>();
    List<List<String>> grid = new ArrayList<>();
    int cols = columns.size() + 1;
    if (top < from) {
      List<StringBuilder> header = new ArrayList<>();
      for (int c = 0; c < cols; c++) {
        header.add(new StringBuilder());
      }
      float groupCentre = (left + columns.get(columns.size() - 1)[1]) / 2;
      float groupWidth = columns.get(columns.size() - 1)[1] - left;
      for (int r = top; r < headerEnd; r++) {
        List<Line> overColumns = rows.get(r).lines().stream()
            .filter(l -> l.box().x1() > left + 0.5f * size).toList();
        for (Line l : rows.get(r).lines()) {
          used.add(l);
          // A line alone on its row, centred over the columns, heads them all ("Years Ended"),
          // unless it is the first word of one column's own header, stacked over the next
          // ("Accumulated" over "Other" over "Comprehensive Income") where the row below heads
          // only some of the columns.
          boolean spansAll = columns.size() >= 2 && overColumns.size() == 1
              && overColumns.get(0) == l
              && Math.abs(l.box().centerX() - groupCentre) <= 0.15f * groupWidth
              && !(stacked(l, rows.subList(r + 1, headerEnd))
                  && !headsEvery(rows.get(r + 1), columns, size));
          List<Integer> targets = spansAll ? java.util.stream.IntStream.rangeClosed(1,
              columns.size()).boxed().toList() : headerColumns(l, columns, left, size);
          for (int c : targets) {
            append(header.get(c), l.text());
          }
        }
      }
      List<String> h = new ArrayList<>();
      for (StringBuilder sb : header) {
        h.add(sb.toString());
      }
      grid.add(h);
    }
    List<Boolean> hasFigures = new ArrayList<>();
    for (int r = from; r < to; r++) {
      Row row = rows.get(r);
      used.addAll(row.lines());
      String label = PdfLayout.joinWords(row.label());
      List<String> cells = new ArrayList<>();
      cells.add(label);
      for (int c = 1; c < cols; c++) {
        cells.add("");
      }
      for (Cell cell : row.cells()) {
        int c = column(cell, columns) + 1;
        cells.set(c, cells.get(c).isEmpty() ? cell.text() : cells.get(c) + " " + cell.text());
      }
      boolean bodyAbove = !grid.isEmpty() && grid.size() > (top < from ? 1 : 0);
      boolean continues = !label.isEmpty() && bodyAbove
          && (startsLowerCase(label)
              || !hasFigures.get(hasFigures.size() - 1)
                  && runsOn(grid.get(grid.size() - 1).get(0)));
      if (continues && !row.figures()) {
        // The second line of the label above.
        List<String> prev = grid.get(grid.size() - 1);
        prev.set(0, prev.get(0) + " " + label);
        continue;
      }
      if (continues && !hasFigures.get(hasFigures.size() - 1)) {
        // A wrapped label whose figures stand on its last line.
        List<String> prev = grid.remove(grid.size() - 1);
        hasFigures.remove(hasFigures.size() - 1);
        cells.set(0, prev.get(0) + " " + label);
      }
      grid.add(cells);
      hasFigures.add(row.figures());
    }
    PdfRect box = null;
    for (Line l : used) {
      box = box == null ? l.box() : box.union(l.box());
    }
    lines.removeAll(used);
    return new Table(box, grid);
  }

  /**
   * Whether a label starts in lower case, past an opening bracket: the rest of the line above
   * ("(loss), net of taxes" under "Other comprehensive income").
   */
  private static boolean startsLowerCase(String label) {
    int i = 0;
    while (i < label.length() && "([\"“‘'".indexOf(label.charAt(i)) >= 0) {
      i++;
    }
    return i < label.length() && Character.isLowerCase(label.codePointAt(i));
  }

  /**
   * A label cut mid-phrase: a bracket left open, a comma, semicolon or hyphen at its end, or a word
   * that cannot end a phrase ("and", "of", "net").
   */
  private static boolean runsOn(String label) {
    int open = 0;
    for (int i = 0; i < label.length(); i++) {
      char ch = label.charAt(i);
      open += ch == '(' ? 1 : ch == ')' ? -1 : 0;
    }
    return open > 0 || label.matches(".*[,;\\-–]$")
        || label.matches("(?is).*\\b(and|or|of|the|in|for|to|from|with|by|on|net|less)$");
  }

  /**
   * Whether {@code above} is one more line of the header whose row {@code below} is: the lines of
   * a column's header follow each other at about a line's pitch, while a title or a note over the
   * table stands a blank line or more above it.
   */
  private static boolean headerLines(Row above, Row below) {
    return below.baseline() - above.baseline() <= 2f * Math.min(above.size(), below.size());
  }

  /** Whether the row above {@code at} is close enough to belong to the same table. */
  private static boolean headerAbove(List<Row> rows, int at, float left, float size) {
    Row above = rows.get(at - 1);
    Row below = rows.get(at);
    return below.baseline() - above.baseline() <= 3.2f * Math.max(above.size(), below.size());
  }

  /**
   * What a table's body rows share, against which a row above them is judged: where their labels
   * end (the longest label that stays left of the figures) and the size they are set in (the
   * median of the rows').
   */
  private record Body(float labelRight, float size) {}

  private static Body body(List<Row> rows, float left) {
    float labelRight = 0;
    List<Float> sizes = new ArrayList<>();
    for (Row r : rows) {
      float end = r.labelX1();
      if (end <= left) {
        labelRight = Math.max(labelRight, end);
      }
      sizes.add(r.size());
    }
    sizes.sort(null);
    return new Body(labelRight, sizes.get(sizes.size() / 2));
  }

  /**
   * A header row: text over the columns (periods, dates, units), no line item with figures, no
   * line running from the label area across the columns (a title or a sentence), and not set
   * larger than the table's rows (a statement's title centred over a wide table lies over its
   * columns too). A column's header may be wider than its figures and reach into the gap between
   * the labels and the figures ("Shares" over "601"): only a line that starts where labels stand
   * runs across.
   */
  private static boolean headerLike(Row row, float left, float size, Body body) {
    if (row.x1() <= left - size || row.figures() && !row.yearsOnly()) {
      return false;
    }
    if (row.size() > 1.15f * body.size() && row.size() >= body.size() + 1.5f) {
      return false;
    }
    float labelArea = body.labelRight() > 0 ? Math.min(left - 2 * size, body.labelRight())
        : left - 2 * size;
    int labelWords = 0;
    for (Line l : row.lines()) {
      if (l.box().x0() < labelArea && l.box().x1() > left || l.words().size() > 12) {
        return false;
      }
      if (l.box().x1() <= left) {
        labelWords += l.words().size();
      }
    }
    return labelWords <= 8;
  }

  /**
   * Whether a header line below {@code l}, in {@code below}, is centred under it and at least
   * about as wide: the two are lines of one column's header, where a heading over several
   * columns is wider than what stands under it.
   */
  private static boolean stacked(Line l, List<Row> below) {
    float width = l.box().x1() - l.box().x0();
    for (Row r : below) {
      for (Line o : r.lines()) {
        if (Math.abs(o.box().centerX() - l.box().centerX()) <= 0.1f * width + 1
            && o.box().x1() - o.box().x0() >= 0.8f * width) {
          return true;
        }
      }
    }
    return false;
  }

  /** Whether {@code row} has a line over each of the columns. */
  private static boolean headsEvery(Row row, List<float[]> columns, float size) {
    for (float[] c : columns) {
      if (row.lines().stream().noneMatch(l -> l.box().x1() > c[0] - size
          && l.box().x0() < c[1] + size)) {
        return false;
      }
    }
    return true;
  }

  private static void append(StringBuilder sb, String text) {
    if (!sb.isEmpty()) {
      sb.append(' ');
    }
    sb.append(text);
  }

  /**
   * The table columns a header line belongs to: the label column when it lies left of the
   * figures, every column whose centre it spans when it is wide ("Years Ended" over three),
   * else the nearest column.
   */
  private static List<Integer> headerColumns(Line l, List<float[]> columns, float left,
      float size) {
    if (l.box().x1() <= left + 0.5f * size) {
      return List.of(0);
    }
    List<Integer> spanned = new ArrayList<>();
    for (int c = 0; c < columns.size(); c++) {
      float centre = (columns.get(c)[0] + columns.get(c)[1]) / 2;
      if (centre >= l.box().x0() - 1 && centre <= l.box().x1() + 1) {
        spanned.add(c + 1);
      }
    }
    if (spanned.size() >= 2) {
      return spanned;
    }
    float best = Float.MAX_VALUE;
    int nearest = 1;
    for (int c = 0; c < columns.size(); c++) {
      float d = Math.abs((columns.get(c)[0] + columns.get(c)[1]) / 2 - l.box().centerX());
      if (d < best) {
        best = d;
        nearest = c + 1;
      }
    }
    return List.of(nearest);
  }

  /**
   * Figure columns: the x extents of the rows' figure cells, merged where they overlap. Figures
   * are right-aligned in a column of their own, so cells of one column overlap and those of two
   * columns do not.
   */
  private static List<float[]> columns(List<Row> rows) {
    List<Cell> cells = new ArrayList<>();
    for (Row r : rows) {
      cells.addAll(r.cells());
    }
    cells.sort(Comparator.comparingDouble(Cell::x0));
    List<float[]> columns = new ArrayList<>();
    for (Cell c : cells) {
      float[] last = columns.isEmpty() ? null : columns.get(columns.size() - 1);
      if (last != null && c.x0() <= last[1] + 1) {
        last[1] = Math.max(last[1], c.x1());
      } else {
        columns.add(new float[] {c.x0(), c.x1()});
      }
    }
    return columns.size() > 20 ? List.of() : columns;
  }

  private static int column(Cell cell, List<float[]> columns) {
    float best = Float.MAX_VALUE;
    int at = 0;
    for (int c = 0; c < columns.size(); c++) {
      float overlap = Math.min(cell.x1(), columns.get(c)[1]) - Math.max(cell.x0(), columns.get(c)[0]);
      float d = overlap > 0 ? -overlap : Math.abs((columns.get(c)[0] + columns.get(c)[1]) / 2
          - (cell.x0() + cell.x1()) / 2);
      if (d < best) {
        best = d;
        at = c;
      }
    }
    return at;
  }

  // ---- rows ----

  /** The page's lines grouped by baseline, each split into its label and its figure cells. */
  private static List<Row> rows(List<Line> lines) {
    List<Line> sorted = new ArrayList<>();
    for (Line l : lines) {
      if (!l.rotated() && !l.rtl()) {
        sorted.add(l);
      }
    }
    sorted.sort(Comparator.comparingDouble(Line::baseline));
    List<List<Line>> groups = new ArrayList<>();
    for (Line l : sorted) {
      List<Line> last = groups.isEmpty() ? null : groups.get(groups.size() - 1);
      if (last != null && l.baseline() - last.get(0).baseline()
          <= Math.max(2f, 0.3f * Math.min(l.size(), last.get(0).size()))) {
        last.add(l);
      } else {
        groups.add(new ArrayList<>(List.of(l)));
      }
    }
    List<Row> rows = new ArrayList<>();
    for (List<Line> g : groups) {
      // The row's baseline is its first line's, the one the others were gathered to, not
      // whichever lies leftmost (a label set a point lower than its figures).
      float baseline = g.get(0).baseline();
      g.sort(Comparator.comparingDouble(l -> l.box().x0()));
      rows.add(row(g, baseline));
    }
    return rows;
  }

  /** Whether the marker {@code words[at]} follows a figure closely: "2.04 (c)". */
  private static boolean markerOfFigure(List<Word> words, int at, float size) {
    if (at == 0) {
      return false;
    }
    Word before = words.get(at - 1);
    return (FIGURE.matcher(before.text()).matches() || CLOSER.matcher(before.text()).matches())
        && words.get(at).box().x0() - before.box().x1() <= 0.6f * size;
  }

  private static Row row(List<Line> lines, float baseline) {
    List<Word> words = new ArrayList<>();
    float size = 0;
    for (Line l : lines) {
      words.addAll(l.words());
      size = Math.max(size, l.size());
    }
    words.sort(Comparator.comparingDouble(w -> w.box().x0()));
    // The figure tail: figures, currency signs, closing brackets, and footnote markers set just
    // after a figure, from the right end.
    int start = words.size();
    while (start > 0) {
      String t = words.get(start - 1).text();
      if (FIGURE.matcher(t).matches() || SIGN.matcher(t).matches() || CLOSER.matcher(t).matches()
          || MARKER.matcher(t).matches() && markerOfFigure(words, start - 1, size)) {
        start--;
      } else {
        break;
      }
    }
    // A label's own last word can be a number ("Note 5", "in 2022"): the tail starts past a gap.
    while (start < words.size() && start > 0
        && words.get(start).box().x0() - words.get(start - 1).box().x1() < 1.0f * size) {
      start++;
    }
    List<Cell> cells = new ArrayList<>();
    StringBuilder text = new StringBuilder();
    float x0 = 0;
    float x1 = 0;
    boolean digits = false;
    for (int i = start; i < words.size(); i++) {
      Word w = words.get(i);
      String t = w.text();
      boolean closer = CLOSER.matcher(t).matches() && !text.isEmpty();
      boolean marker = MARKER.matcher(t).matches() && digits;
      // A currency sign stands at its column's left edge, far from the figure it belongs to.
      boolean newCell = !text.isEmpty() && !closer && !marker && digits;
      if (newCell) {
        cells.add(new Cell(text.toString(), x0, x1));
        text.setLength(0);
        digits = false;
      }
      if (text.isEmpty()) {
        x0 = w.box().x0();
      } else if (!closer) {
        text.append(' ');
      }
      text.append(t);
      x1 = w.box().x1();
      digits |= FIGURE.matcher(t).matches();
    }
    if (!text.isEmpty()) {
      if (digits) {
        cells.add(new Cell(text.toString(), x0, x1));
      } else {
        start = words.size(); // a lone sign with no figure: not a cell
      }
    }
    return new Row(lines, List.copyOf(words.subList(0, start)), cells, baseline, size);
  }
}
