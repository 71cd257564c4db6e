package dev.quarry.ingest;

import dev.quarry.ingest.PdfPageReader.Glyph;
import dev.quarry.ingest.PdfPageReader.Page;
import dev.quarry.ingest.PdfPageReader.Ruling;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Geometric layout analysis of one page: glyphs become words and line segments, ruled regions
 * and column-aligned rows become tables, image clusters become pictures, the remaining lines
 * become paragraph blocks, and all of them are put in reading order by a recursive XY cut that
 * prefers column gutters.
 */
final class PdfLayout {
  static final Pattern CAPTION = Pattern.compile(
      "^(Figure|Fig\\.|Table|Tab\\.|Chart|Exhibit|Plate)\\s*[A-Z]?\\d+([.\\-–]\\d+)*[.:]?(\\s|$).*",
      Pattern.CASE_INSENSITIVE | Pattern.DOTALL);
  static final Pattern LIST_MARKER = Pattern.compile(
      "^([•●◦▪■□‣⁃∙·\\-–*]|\\(?(\\d{1,3}|[a-zA-Z]|[ivxIVX]{1,4})[.)])\\s+\\S.*", Pattern.DOTALL);

  /** A bullet on its own: list items often set it apart from their text by a wide gap. */
  static final Pattern BULLET = Pattern.compile("[•●◦▪■□‣⁃∙·\\-–*]");

  record Word(String text, PdfRect box) {}

  /** A run of words on one baseline, not crossing a wide horizontal gap. */
  record Line(List<Word> words, PdfRect box, float baseline, float size, boolean bold,
      boolean italic, boolean rotated, boolean rtl, boolean mono) {
    String text() {
      StringBuilder sb = new StringBuilder();
      for (Word w : words) {
        if (!sb.isEmpty()) {
          sb.append(' ');
        }
        sb.append(w.text());
      }
      return sb.toString();
    }

    /** Bold or italic throughout: the signal for a heading set in the body size. */
    boolean emphasised() {
      return bold || italic;
    }
  }

  /** A unit of the page in reading order. */
  sealed interface Unit permits Block, Table, Picture, Form {
    PdfRect box();
  }

  record Block(List<Line> lines, PdfRect box) implements Unit {}

  record Table(PdfRect box, List<List<String>> grid) implements Unit {}

  record Picture(PdfRect box, List<Line> inner) implements Unit {}

  /**
   * A ruled grid that is a form, not a table: its fields' texts (a label, and what was filled in),
   * each field once, row by row.
   */
  record Form(PdfRect box, List<String> fields) implements Unit {}

  private PdfLayout() {}

  // ---- lines ----

  static List<Line> lines(Page page) {
    // Each text direction forms its lines apart, in its own coordinates.
    java.util.Map<Integer, List<Glyph>> byDirection = new java.util.TreeMap<>();
    for (Glyph g : page.glyphs()) {
      byDirection.computeIfAbsent(g.direction(), d -> new ArrayList<>()).add(g);
    }
    List<Line> lines = new ArrayList<>();
    for (List<Glyph> glyphs : byDirection.values()) {
      lines(glyphs, lines);
    }
    return lines;
  }

  private static void lines(List<Glyph> glyphs, List<Line> lines) {
    glyphs.sort(Comparator.comparingDouble(Glyph::baseline).thenComparingDouble(Glyph::x0));
    List<Glyph> row = new ArrayList<>();
    float rowBaseline = 0;
    float rowSize = 0;
    for (Glyph g : glyphs) {
      // The tolerance follows the row's largest glyph so that superscripts and fraction
      // numerators stay on the line they belong to; line pitch is always well above it.
      if (!row.isEmpty()
          && Math.abs(g.baseline() - rowBaseline) > 0.45f * Math.max(g.size(), rowSize)) {
        for (List<Glyph> part : stacked(row)) {
          segments(part, lines);
        }
        row.clear();
      }
      if (row.isEmpty() || g.size() > rowSize) {
        rowBaseline = g.baseline();
        rowSize = g.size();
      }
      row.add(g);
    }
    for (List<Glyph> part : stacked(row)) {
      segments(part, lines);
    }
  }

  /**
   * A row gathered by baseline tolerance may hold lines stacked over each other: a large heading
   * elsewhere on the row widens the tolerance until two small lines below each other fall into it.
   * Glyphs of distinct baselines that cover the same x belong to different lines; a superscript
   * or a line elsewhere on the row covers no glyph of the line, and stays with it.
   */
  private static List<List<Glyph>> stacked(List<Glyph> row) {
    List<List<Glyph>> levels = new ArrayList<>();
    for (Glyph g : row) { // sorted by baseline
      List<Glyph> last = levels.isEmpty() ? null : levels.get(levels.size() - 1);
      if (last != null && g.baseline() - last.get(last.size() - 1).baseline() <= 0.15f * g.size()) {
        last.add(g);
      } else {
        levels.add(new ArrayList<>(List.of(g)));
      }
    }
    if (levels.size() == 1) {
      return levels;
    }
    List<List<Glyph>> out = new ArrayList<>();
    for (List<Glyph> level : levels) {
      List<Glyph> home = null;
      for (List<Glyph> o : out) {
        if (!covers(o, level)) {
          home = o;
          break;
        }
      }
      if (home == null) {
        out.add(new ArrayList<>(level));
      } else {
        home.addAll(level);
      }
    }
    return out;
  }

  private static boolean covers(List<Glyph> a, List<Glyph> b) {
    for (Glyph x : a) {
      for (Glyph y : b) {
        float overlap = Math.min(x.x1(), y.x1()) - Math.max(x.x0(), y.x0());
        if (overlap > 0.3f * Math.min(x.x1() - x.x0(), y.x1() - y.x0()) && overlap > 0.5f) {
          return true;
        }
      }
    }
    return false;
  }

  private static void segments(List<Glyph> row, List<Line> out) {
    if (row.isEmpty()) {
      return;
    }
    row.sort(Comparator.comparingDouble(Glyph::x0));
    if (interleaved(row)) {
      // Two runs drawn over the same stretch of one baseline (a text box over another column):
      // each run in the order it was drawn is a line of its own, never mixed glyph by glyph.
      List<Glyph> drawn = new ArrayList<>(row);
      drawn.sort(Comparator.comparingInt(Glyph::seq));
      List<Glyph> run = new ArrayList<>();
      for (Glyph g : drawn) {
        Glyph prev = run.isEmpty() ? null : run.get(run.size() - 1);
        if (prev != null && (g.x0() < prev.x0() || g.x0() - prev.x1() > 0.9f * g.size())) {
          splitAtGaps(run, out);
          run = new ArrayList<>();
        }
        run.add(g);
      }
      splitAtGaps(run, out);
      return;
    }
    splitAtGaps(row, out);
  }

  /** Whether glyphs of different drawing runs overlap: one glyph reaches well into the next. */
  private static boolean interleaved(List<Glyph> byX) {
    int overlaps = 0;
    for (int i = 1; i < byX.size(); i++) {
      Glyph a = byX.get(i - 1);
      Glyph b = byX.get(i);
      float width = Math.min(a.x1() - a.x0(), b.x1() - b.x0());
      if (a.x1() - b.x0() > 0.5f * width && width > 0 && Math.abs(b.seq() - a.seq()) > 1
          && !a.text().equals(b.text())) {
        overlaps++;
      }
    }
    return overlaps >= 2;
  }

  private static void splitAtGaps(List<Glyph> row, List<Line> out) {
    if (row.isEmpty()) {
      return;
    }
    row.sort(Comparator.comparingDouble(Glyph::x0));
    List<List<Glyph>> segments = new ArrayList<>();
    List<Glyph> segment = new ArrayList<>();
    float lastX1 = 0;
    for (Glyph g : row) {
      if (!segment.isEmpty() && g.x0() - lastX1 > 0.9f * g.size()
          && !shortPrefix(segment, g.x0() - lastX1, g.size())) {
        segments.add(segment);
        segment = new ArrayList<>();
      }
      segment.add(g);
      lastX1 = segment.size() == 1 ? g.x1() : Math.max(lastX1, g.x1());
    }
    segments.add(segment);
    for (List<Glyph> s : segments) {
      out.add(line(s));
    }
  }

  /**
   * A section number or "Table 1." is often set apart from its text by a wide gap that would
   * otherwise read as a column gutter. Section numbers have parts of one or two digits: a
   * year or a figure ("2023   December 31, 2022" over two columns) is no prefix.
   */
  private static boolean shortPrefix(List<Glyph> segment, float gap, float size) {
    if (gap > 2 * size || segment.size() > 10) {
      return false;
    }
    String text = line(segment).text();
    return text.split(" ").length <= 2
        && (text.matches("(?i)figure|fig\\.|table|tab\\.") || BULLET.matcher(text).matches()
            || text.matches("\\(?([a-zA-Z]|\\d{1,3})[.)]")
            || text.matches("(\\d{1,2}|[IVXivx]{1,5})(\\.(\\d{1,2}|[IVXivx]{1,5}))*\\.?")
            || CAPTION.matcher(text + " x").matches());
  }

  private static Line line(List<Glyph> drawn) {
    List<Glyph> glyphs = withMarks(drawn);
    // Words in visual order (left to right as drawn), each a list of glyphs.
    List<List<Glyph>> visual = new ArrayList<>();
    PdfRect box = null;
    float lastX1 = 0;
    float sizeSum = 0;
    int bold = 0;
    int italic = 0;
    int mono = 0;
    float baseline = 0;
    StringBuilder all = new StringBuilder();
    Glyph last = null;
    for (Glyph g : glyphs) {
      PdfRect gb = glyphBox(g);
      if (!visual.isEmpty() && (g.x0() - lastX1 > 0.12f * g.size() || spaced(last, g))) {
        visual.add(new ArrayList<>());
      } else if (visual.isEmpty()) {
        visual.add(new ArrayList<>());
      }
      visual.get(visual.size() - 1).add(g);
      last = g;
      all.append(g.text());
      box = box == null ? gb : box.union(gb);
      lastX1 = Math.max(lastX1, g.x1());
      sizeSum += g.size();
      bold += g.bold() ? 1 : 0;
      italic += g.italic() ? 1 : 0;
      mono += g.mono() ? 1 : 0;
      baseline = Math.max(baseline, g.baseline());
    }
    boolean rtl = false;
    List<Word> words = new ArrayList<>();
    if (PdfText.hasRightToLeft(all)) {
      rtl = PdfText.rightToLeftBase(all);
      words = logicalWords(visual, rtl);
    } else {
      for (List<Glyph> w : visual) {
        words.add(word(w));
      }
    }
    int n = glyphs.size();
    boolean rotated = glyphs.get(0).onPage() != null;
    if (rotated) {
      // Placed where it sits on the page; its words only matter as text from here on.
      box = null;
      for (Glyph g : glyphs) {
        box = box == null ? g.onPage() : box.union(g.onPage());
      }
      baseline = box.bottom();
      List<Word> placed = new ArrayList<>();
      for (Word w : words) {
        placed.add(new Word(w.text(), box));
      }
      words = placed;
    }
    return new Line(List.copyOf(words), box, baseline, sizeSum / n, bold * 10 >= n * 9,
        italic * 10 >= n * 9, rotated, rtl, mono * 10 >= n * 9);
  }

  /**
   * A word break between two glyphs that touch: a space drawn between them in drawing order,
   * however narrow, or a change of writing direction (a Latin name inside Arabic text).
   */
  private static boolean spaced(Glyph a, Glyph b) {
    return b.seq() == a.seq() + 1 && b.spaceBefore() || a.seq() == b.seq() + 1 && a.spaceBefore()
        || PdfText.strongDirection(a.text()) * PdfText.strongDirection(b.text()) < 0;
  }

  /**
   * Combining marks (Arabic vowel signs, Hebrew points) are drawn as glyphs of their own over
   * their letter; each joins the glyph it sits on (its predecessor in drawing order when that is
   * on the line) so that it neither splits a word nor lands before its letter.
   */
  private static List<Glyph> withMarks(List<Glyph> glyphs) {
    boolean any = false;
    for (Glyph g : glyphs) {
      any |= PdfText.isMark(g.text());
    }
    if (!any || glyphs.size() < 2) {
      return glyphs;
    }
    List<Glyph> out = new ArrayList<>(glyphs);
    java.util.Map<Integer, Integer> bySeq = new java.util.HashMap<>();
    for (int i = 0; i < out.size(); i++) {
      bySeq.put(out.get(i).seq(), i);
    }
    boolean[] gone = new boolean[out.size()];
    for (int i = 0; i < out.size(); i++) {
      Glyph m = out.get(i);
      if (!PdfText.isMark(m.text())) {
        continue;
      }
      Integer base = bySeq.get(m.seq() - 1);
      if (base == null || gone[base]) {
        float best = Float.MAX_VALUE;
        for (int j = 0; j < out.size(); j++) {
          float d = Math.abs(out.get(j).x0() + out.get(j).x1() - m.x0() - m.x1());
          if (j != i && !gone[j] && !PdfText.isMark(out.get(j).text()) && d < best) {
            best = d;
            base = j;
          }
        }
      }
      if (base == null) {
        continue;
      }
      Glyph b = out.get(base);
      out.set(base, new Glyph(b.text() + m.text(), b.x0(), b.x1(), b.top(), b.baseline(),
          b.size(), b.bold(), b.italic(), b.mono(), b.direction(), b.onPage(), b.seq(),
          b.spaceBefore()));
      gone[i] = true;
    }
    List<Glyph> kept = new ArrayList<>();
    for (int i = 0; i < out.size(); i++) {
      if (!gone[i]) {
        kept.add(out.get(i));
      }
    }
    return kept;
  }

  private static PdfRect glyphBox(Glyph g) {
    return new PdfRect(g.x0(), g.top(), Math.max(g.x1(), g.x0() + 0.1f), g.baseline());
  }

  private static Word word(List<Glyph> glyphs) {
    StringBuilder text = new StringBuilder();
    PdfRect box = null;
    for (Glyph g : glyphs) {
      text.append(g.text());
      box = box == null ? glyphBox(g) : box.union(glyphBox(g));
    }
    return new Word(text.toString(), box);
  }

  /**
   * A line drawn in visual order, put in logical order: each glyph stands for one character (its
   * first) in a string of the line with single spaces between words, the string's logical order
   * comes from {@link PdfText#visualToLogical}, and the glyphs follow it. A glyph's own text (a
   * ligature of several letters) keeps its order.
   */
  private static List<Word> logicalWords(List<List<Glyph>> visual, boolean rtlBase) {
    StringBuilder s = new StringBuilder();
    List<Glyph> at = new ArrayList<>();
    for (List<Glyph> w : visual) {
      if (!s.isEmpty()) {
        s.append(' ');
        at.add(null);
      }
      for (Glyph g : w) {
        s.append(g.text().charAt(0));
        at.add(g);
      }
    }
    int[] order = PdfText.visualToLogical(s.toString(), rtlBase);
    List<Word> words = new ArrayList<>();
    List<Glyph> current = new ArrayList<>();
    for (int k : order) {
      Glyph g = at.get(k);
      if (g == null) {
        if (!current.isEmpty()) {
          words.add(word(current));
          current = new ArrayList<>();
        }
      } else {
        current.add(g);
      }
    }
    if (!current.isEmpty()) {
      words.add(word(current));
    }
    return words;
  }

  // ---- tables ----

  /**
   * Finds ruled tables and removes the lines they hold from {@code lines}; ruled grids that are
   * forms go to {@code forms} instead.
   */
  static List<Table> tables(Page page, List<Line> lines, List<Form> forms) {
    List<Ruling> rulings = new ArrayList<>();
    for (Ruling r : page.rulings()) {
      if (r.to() - r.from() >= (r.horizontal() ? 10 : 5)) {
        rulings.add(r);
      }
    }
    List<Table> tables = new ArrayList<>();
    for (List<Ruling> connected : components(rulings)) {
      for (List<Ruling> component : unstacked(connected)) {
        switch (table(component, page, lines)) {
          case Table t -> tables.add(t);
          case Form f -> forms.add(f);
          case null, default -> { }
        }
      }
    }
    return tables;
  }

  /**
   * A component split where it is two boxes one above the other: a band that no vertical ruling
   * crosses, with both sides of the upper box closing at its top and both sides of the lower box
   * opening at its bottom. Stacked booktabs rules join components on purpose; boxed tables a
   * heading apart do not make one table.
   */
  static List<List<Ruling>> unstacked(List<Ruling> component) {
    List<Ruling> verticals = component.stream().filter(r -> !r.horizontal()).toList();
    if (verticals.isEmpty()) {
      return List.of(component);
    }
    float left = Float.MAX_VALUE;
    float right = -Float.MAX_VALUE;
    for (Ruling r : component) {
      if (r.horizontal()) {
        left = Math.min(left, r.from());
        right = Math.max(right, r.to());
      }
    }
    List<Float> ys = positions(component, true);
    for (int i = 0; i + 1 < ys.size(); i++) {
      float upper = ys.get(i);
      float lower = ys.get(i + 1);
      boolean crossed = false;
      for (Ruling v : verticals) {
        crossed |= v.from() <= upper + 2 && v.to() >= lower - 2;
      }
      if (!crossed && boxed(verticals, left, upper, lower) && boxed(verticals, right, upper, lower)) {
        float cut = (upper + lower) / 2;
        List<Ruling> above = new ArrayList<>();
        List<Ruling> below = new ArrayList<>();
        for (Ruling r : component) {
          float mid = r.horizontal() ? r.pos() : (r.from() + r.to()) / 2;
          (mid < cut ? above : below).add(r);
        }
        if (sameColumns(above, below, left, right)) {
          continue; // one table drawn as two boxes: its lower part still needs the header above
        }
        List<List<Ruling>> out = new ArrayList<>(unstacked(above));
        out.addAll(unstacked(below));
        return out;
      }
    }
    return List.of(component);
  }

  /** Whether two boxes divide their columns at the same places (their sides aside). */
  private static boolean sameColumns(List<Ruling> above, List<Ruling> below, float left,
      float right) {
    List<Float> a = innerColumns(above, left, right);
    List<Float> b = innerColumns(below, left, right);
    return !a.isEmpty() && covered(a, b) && covered(b, a);
  }

  private static List<Float> innerColumns(List<Ruling> rulings, float left, float right) {
    List<Float> xs = new ArrayList<>();
    for (float x : positions(rulings, false)) {
      if (x - left > 2 && right - x > 2) {
        xs.add(x);
      }
    }
    return xs;
  }

  private static boolean covered(List<Float> xs, List<Float> by) {
    return xs.stream().allMatch(x -> by.stream().anyMatch(y -> Math.abs(x - y) <= 2));
  }

  /**
   * Whether the side of the grid at {@code x} is closed above the band (a vertical there ends at
   * {@code upper}) and opens again below it (one starts at {@code lower}): the sides of two boxes,
   * not of one table with a row whose rules were left out.
   */
  private static boolean boxed(List<Ruling> verticals, float x, float upper, float lower) {
    boolean ends = false;
    boolean starts = false;
    for (Ruling v : verticals) {
      if (Math.abs(v.pos() - x) <= 2) {
        ends |= Math.abs(v.to() - upper) <= 2;
        starts |= Math.abs(v.from() - lower) <= 2;
      }
    }
    return ends && starts;
  }

  /** Groups rulings that touch, and long horizontal rules stacked above each other (booktabs). */
  static List<List<Ruling>> components(List<Ruling> rulings) {
    int n = rulings.size();
    int[] parent = new int[n];
    for (int i = 0; i < n; i++) {
      parent[i] = i;
    }
    for (int i = 0; i < n; i++) {
      for (int j = i + 1; j < n; j++) {
        if (connected(rulings.get(i), rulings.get(j))) {
          parent[find(parent, i)] = find(parent, j);
        }
      }
    }
    java.util.Map<Integer, List<Ruling>> groups = new java.util.LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      groups.computeIfAbsent(find(parent, i), k -> new ArrayList<>()).add(rulings.get(i));
    }
    return new ArrayList<>(groups.values());
  }

  private static int find(int[] parent, int i) {
    while (parent[i] != i) {
      parent[i] = parent[parent[i]];
      i = parent[i];
    }
    return i;
  }

  private static boolean connected(Ruling a, Ruling b) {
    float tol = 2;
    if (a.horizontal() != b.horizontal()) {
      Ruling h = a.horizontal() ? a : b;
      Ruling v = a.horizontal() ? b : a;
      return v.pos() >= h.from() - tol && v.pos() <= h.to() + tol && h.pos() >= v.from() - tol
          && h.pos() <= v.to() + tol;
    }
    if (Math.abs(a.pos() - b.pos()) <= tol) {
      return a.from() <= b.to() + tol && b.from() <= a.to() + tol;
    }
    if (a.horizontal() && a.to() - a.from() >= 50 && b.to() - b.from() >= 50
        && Math.abs(a.pos() - b.pos()) <= 60) {
      float overlap = Math.min(a.to(), b.to()) - Math.max(a.from(), b.from());
      return overlap >= 0.8f * Math.min(a.to() - a.from(), b.to() - b.from());
    }
    return false;
  }

  private static Unit table(List<Ruling> component, Page page, List<Line> lines) {
    List<Float> ys = positions(component, true);
    List<Float> xs = positions(component, false);
    PdfRect box = null;
    for (Ruling r : component) {
      PdfRect rb = r.horizontal() ? new PdfRect(r.from(), r.pos(), r.to(), r.pos())
          : new PdfRect(r.pos(), r.from(), r.pos(), r.to());
      box = box == null ? rb : box.union(rb);
    }
    if (box.width() < 30 || box.height() < 10) {
      return null;
    }
    boolean grid = ys.size() >= 2 && xs.size() >= 3;
    if (!grid && ys.size() < 3) {
      return null; // a frame or an underline, not a table
    }
    for (PdfRect image : page.images()) {
      if (image.overlapArea(box) > 0.3f * box.width() * box.height()) {
        return null; // a framed figure
      }
    }
    PdfRect area = new PdfRect(box.x0() - 1, box.top() - 1, box.x1() + 1, box.bottom() + 1);
    List<Line> inside = new ArrayList<>();
    for (Line l : lines) {
      if (area.contains(l.box().centerX(), l.box().centerY())) {
        inside.add(l);
      }
    }
    if (inside.size() < 2) {
      return null;
    }
    // Column rules: three or more, or inner ones drawn over the table's whole height (a table
    // framed by horizontal rules only, its columns divided by one or two vertical rules).
    boolean ruledColumns = xs.size() >= 3 || ys.size() >= 3 && !xs.isEmpty()
        && innerColumnsRuled(component, xs, box);
    List<Float> colEdges = ruledColumns ? withEdges(xs, box.x0(), box.x1()) : textColumns(inside, box);
    List<Float> rowEdges = ruledColumns ? withEdges(ys, box.top(), box.bottom()) : textRows(inside, box);
    int rows = rowEdges.size() - 1;
    int cols = colEdges.size() - 1;
    if (rows < 1 || cols < 2 || rows * cols > 10_000) {
      return null;
    }
    List<Word>[][] cells = cellWords(inside, rowEdges, colEdges);
    int[] group = new int[rows * cols];
    for (int i = 0; i < group.length; i++) {
      group[i] = i;
    }
    if (ruledColumns) {
      mergeSpans(component, rowEdges, colEdges, group);
      if (rows >= 2 && cols >= 3 && sharedColumnEdges(component, rowEdges, colEdges) < 0.5) {
        List<String> fields = fields(cells, group, rows, cols);
        if (fields.size() >= 2 && figures(fields) < 0.2 * fields.size()) {
          lines.removeAll(inside);
          return new Form(box, fields);
        }
      }
    }
    List<List<String>> out = new ArrayList<>();
    String[] groupText = new String[group.length];
    for (int r = 0; r < rows; r++) {
      List<String> row = new ArrayList<>();
      for (int c = 0; c < cols; c++) {
        int g = find(group, r * cols + c);
        if (groupText[g] == null) {
          List<Word> words = new ArrayList<>();
          for (int i = 0; i < group.length; i++) {
            if (find(group, i) == g) {
              words.addAll(cells[i / cols][i % cols]);
            }
          }
          groupText[g] = joinWords(words);
        }
        row.add(groupText[g]);
      }
      out.add(row);
    }
    out = dropEmpty(out);
    if (out.size() < 1 || out.get(0).size() < 2) {
      return null;
    }
    lines.removeAll(inside);
    return new Table(box, out);
  }

  /**
   * How far the grid's rows share its columns: over the inner column edges, the mean share of rows
   * in which the edge is ruled. A table's columns run through its rows (a spanning header cell
   * or two aside), so its edges are ruled in most rows; a form divides each row its own way, and
   * the union of its rows' divisions is ruled in few of them.
   */
  private static double sharedColumnEdges(List<Ruling> rulings, List<Float> rowEdges,
      List<Float> colEdges) {
    int rows = rowEdges.size() - 1;
    double sum = 0;
    int edges = 0;
    for (int c = 1; c + 1 < colEdges.size(); c++) {
      int ruledRows = 0;
      for (int r = 0; r < rows; r++) {
        if (ruled(rulings, false, colEdges.get(c), (rowEdges.get(r) + rowEdges.get(r + 1)) / 2)) {
          ruledRows++;
        }
      }
      sum += ruledRows / (double) rows;
      edges++;
    }
    return edges == 0 ? 1 : sum / edges;
  }

  /** A figure as a cell or a word shows it: 54, 5,480, (1,049), -3.2, 12.5%, $40. */
  static final Pattern FIGURE = Pattern.compile("[($€£-]*[\\d.,%]*\\d[\\d.,%)]*");

  /**
   * How many of the cells are mostly figures. A form's cells hold labels (their field numbers
   * aside), a financial table's hold amounts: one whose headers span columns every which way is
   * still a table.
   */
  private static long figures(List<String> cells) {
    return cells.stream().filter(c -> {
      String[] tokens = c.strip().split("\\s+");
      long n = java.util.Arrays.stream(tokens).filter(t -> FIGURE.matcher(t).matches()).count();
      return n * 2 > tokens.length;
    }).count();
  }

  /** A form's fields: each merged cell's words once, in the order of its first grid cell. */
  private static List<String> fields(List<Word>[][] cells, int[] group, int rows, int cols) {
    java.util.Map<Integer, List<Word>> byGroup = new java.util.LinkedHashMap<>();
    for (int i = 0; i < rows * cols; i++) {
      byGroup.computeIfAbsent(find(group, i), g -> new ArrayList<>()).addAll(cells[i / cols][i % cols]);
    }
    List<String> fields = new ArrayList<>();
    for (List<Word> words : byGroup.values()) {
      String text = joinWords(words);
      if (!text.isBlank()) {
        fields.add(text);
      }
    }
    return fields;
  }

  private static boolean innerColumnsRuled(List<Ruling> rulings, List<Float> xs, PdfRect box) {
    for (float x : xs) {
      if (x - box.x0() < 5 || box.x1() - x < 5) {
        return false;
      }
      List<Ruling> at = new ArrayList<>();
      for (Ruling r : rulings) {
        if (!r.horizontal() && Math.abs(r.pos() - x) <= 2) {
          at.add(r);
        }
      }
      at.sort(Comparator.comparingDouble(Ruling::from));
      float covered = 0;
      float reach = -Float.MAX_VALUE;
      for (Ruling r : at) { // the union of the segments: a rule may be drawn twice
        float from = Math.max(r.from(), reach);
        if (r.to() > from) {
          covered += r.to() - from;
        }
        reach = Math.max(reach, r.to());
      }
      if (covered < 0.8f * box.height()) {
        return false;
      }
    }
    return true;
  }

  private static List<Float> positions(List<Ruling> rulings, boolean horizontal) {
    List<Float> all = new ArrayList<>();
    for (Ruling r : rulings) {
      if (r.horizontal() == horizontal) {
        all.add(r.pos());
      }
    }
    all.sort(Float::compare);
    List<Float> out = new ArrayList<>();
    for (Float p : all) {
      if (out.isEmpty() || p - out.get(out.size() - 1) > 2) {
        out.add(p);
      }
    }
    return out;
  }

  private static List<Float> withEdges(List<Float> cuts, float min, float max) {
    List<Float> out = new ArrayList<>();
    if (cuts.isEmpty() || cuts.get(0) - min > 2) {
      out.add(min);
    }
    out.addAll(cuts);
    if (out.get(out.size() - 1) < max - 2) {
      out.add(max);
    }
    return out;
  }

  /** Column edges from the gaps in the x-projection of the table's line segments. */
  private static List<Float> textColumns(List<Line> inside, PdfRect box) {
    List<PdfRect> spans = new ArrayList<>();
    for (Line l : inside) {
      spans.add(l.box());
    }
    spans.sort(Comparator.comparingDouble(PdfRect::x0));
    List<Float> edges = new ArrayList<>();
    edges.add(box.x0());
    float reach = spans.get(0).x1();
    for (PdfRect s : spans) {
      if (s.x0() > reach + 2) {
        edges.add((reach + s.x0()) / 2);
      }
      reach = Math.max(reach, s.x1());
    }
    edges.add(Math.max(box.x1(), reach));
    return edges;
  }

  /** Row edges between successive text baselines. */
  private static List<Float> textRows(List<Line> inside, PdfRect box) {
    List<Float> baselines = new ArrayList<>();
    for (Line l : inside) {
      baselines.add(l.baseline());
    }
    baselines.sort(Float::compare);
    List<Float> distinct = new ArrayList<>();
    for (Float b : baselines) {
      if (distinct.isEmpty() || b - distinct.get(distinct.size() - 1) > 2) {
        distinct.add(b);
      }
    }
    List<Float> edges = new ArrayList<>();
    edges.add(Math.min(box.top(), distinct.get(0) - 20));
    for (int i = 1; i < distinct.size(); i++) {
      edges.add(distinct.get(i) - (distinct.get(i) - distinct.get(i - 1)) / 2 + 2);
    }
    edges.add(Math.max(box.bottom(), distinct.get(distinct.size() - 1) + 5));
    return edges;
  }

  @SuppressWarnings("unchecked")
  private static List<Word>[][] cellWords(List<Line> inside, List<Float> rowEdges,
      List<Float> colEdges) {
    int rows = rowEdges.size() - 1;
    int cols = colEdges.size() - 1;
    List<Word>[][] cells = new List[rows][cols];
    for (int r = 0; r < rows; r++) {
      for (int c = 0; c < cols; c++) {
        cells[r][c] = new ArrayList<>();
      }
    }
    for (Line l : inside) {
      for (Word w : l.words()) {
        int r = slot(rowEdges, w.box().centerY());
        int c = slot(colEdges, w.box().centerX());
        cells[r][c].add(w);
      }
    }
    return cells;
  }

  private static int slot(List<Float> edges, float v) {
    for (int i = 1; i < edges.size() - 1; i++) {
      if (v < edges.get(i)) {
        return i - 1;
      }
    }
    return edges.size() - 2;
  }

  /** Joins neighbouring cells that no ruling separates: merged cells, as docling spans them. */
  private static void mergeSpans(List<Ruling> rulings, List<Float> rowEdges, List<Float> colEdges,
      int[] group) {
    int rows = rowEdges.size() - 1;
    int cols = colEdges.size() - 1;
    for (int r = 0; r < rows; r++) {
      float midY = (rowEdges.get(r) + rowEdges.get(r + 1)) / 2;
      for (int c = 0; c + 1 < cols; c++) {
        if (!ruled(rulings, false, colEdges.get(c + 1), midY)) {
          group[find(group, r * cols + c)] = find(group, r * cols + c + 1);
        }
      }
    }
    for (int c = 0; c < cols; c++) {
      float midX = (colEdges.get(c) + colEdges.get(c + 1)) / 2;
      for (int r = 0; r + 1 < rows; r++) {
        if (!ruled(rulings, true, rowEdges.get(r + 1), midX)) {
          group[find(group, r * cols + c)] = find(group, (r + 1) * cols + c);
        }
      }
    }
  }

  private static boolean ruled(List<Ruling> rulings, boolean horizontal, float pos, float at) {
    for (Ruling r : rulings) {
      if (r.horizontal() == horizontal && Math.abs(r.pos() - pos) <= 2 && at >= r.from() - 1
          && at <= r.to() + 1) {
        return true;
      }
    }
    return false;
  }

  static String joinWords(List<Word> words) {
    List<Word> sorted = new ArrayList<>(words);
    sorted.sort(Comparator.comparingDouble((Word w) -> Math.round(w.box().bottom() / 3f))
        .thenComparingDouble(w -> w.box().x0()));
    StringBuilder sb = new StringBuilder();
    for (Word w : sorted) {
      if (!sb.isEmpty()) {
        sb.append(' ');
      }
      sb.append(w.text());
    }
    return sb.toString();
  }

  private static List<List<String>> dropEmpty(List<List<String>> grid) {
    List<List<String>> rows = new ArrayList<>();
    for (List<String> r : grid) {
      if (r.stream().anyMatch(s -> !s.isBlank())) {
        rows.add(r);
      }
    }
    if (rows.isEmpty()) {
      return rows;
    }
    int cols = rows.get(0).size();
    List<Integer> keep = new ArrayList<>();
    for (int c = 0; c < cols; c++) {
      final int cc = c;
      if (rows.stream().anyMatch(r -> !r.get(cc).isBlank())) {
        keep.add(c);
      }
    }
    List<List<String>> out = new ArrayList<>();
    for (List<String> r : rows) {
      List<String> row = new ArrayList<>();
      for (int c : keep) {
        row.add(r.get(c));
      }
      out.add(row);
    }
    return out;
  }

  /**
   * Finds tables drawn without rulings: at least three consecutive rows, each split by wide gaps
   * into two or more segments that fall into shared columns, with short cells rather than prose
   * (two columns of running text also split every row, but into long lines). Removes the lines
   * they hold from {@code lines}.
   */
  static List<Table> alignedTables(List<Line> lines) {
    List<List<Line>> rows = rows(lines);
    List<Table> tables = new ArrayList<>();
    int i = 0;
    while (i < rows.size()) {
      int end = i;
      while (end < rows.size() && (end == i || closeRows(rows.get(end - 1), rows.get(end)))
          && (rows.get(end).size() >= 2 || end > i && wrappedCell(rows, i, end))) {
        end++;
      }
      Table t = end - i >= 3 ? alignedTable(rows.subList(i, end)) : null;
      if (t != null) {
        for (List<Line> row : rows.subList(i, end)) {
          lines.removeAll(row);
        }
        tables.add(t);
      }
      i = Math.max(end, i + 1);
    }
    return tables;
  }

  /**
   * A lone short segment between two rows of a table, clear of the first column: the second line
   * of a cell whose text wraps.
   */
  private static boolean wrappedCell(List<List<Line>> rows, int start, int at) {
    List<Line> row = rows.get(at);
    Line l = row.get(0);
    return row.size() == 1 && at + 1 < rows.size() && rows.get(at + 1).size() >= 2
        && closeRows(row, rows.get(at + 1)) && !isParagraphLine(l)
        && l.box().x0() > rows.get(start).get(0).box().x1();
  }

  /** Lines grouped by shared baseline, top to bottom, each row left to right. */
  private static List<List<Line>> rows(List<Line> lines) {
    List<Line> sorted = new ArrayList<>();
    for (Line l : lines) {
      if (!l.rotated()) {
        sorted.add(l);
      }
    }
    sorted.sort(Comparator.comparingDouble(Line::baseline));
    List<List<Line>> rows = new ArrayList<>();
    for (Line l : sorted) {
      List<Line> last = rows.isEmpty() ? null : rows.get(rows.size() - 1);
      if (last != null && Math.abs(last.get(0).baseline() - l.baseline()) <= 2) {
        last.add(l);
      } else {
        rows.add(new ArrayList<>(List.of(l)));
      }
    }
    for (List<Line> row : rows) {
      row.sort(Comparator.comparingDouble(l -> l.box().x0()));
    }
    return rows;
  }

  private static boolean closeRows(List<Line> upper, List<Line> lower) {
    float size = Math.max(upper.get(0).size(), lower.get(0).size());
    return lower.get(0).baseline() - upper.get(0).baseline() <= 2.2f * size;
  }

  private static Table alignedTable(List<List<Line>> rows) {
    List<Line> inside = new ArrayList<>();
    int prose = 0;
    for (List<Line> row : rows) {
      inside.addAll(row);
      for (Line l : row) {
        // A wordy line going on in lower case continues a sentence: a column of prose.
        boolean runsOn = l.words().size() >= 3 && Character.isLowerCase(l.text().codePointAt(0));
        prose += isParagraphLine(l) || runsOn ? 1 : 0;
      }
    }
    int words = 0;
    for (Line l : inside) {
      words += l.words().size();
    }
    // Narrow columns of prose split every row too, but into lines of many words.
    if (prose * 4 > inside.size() || words > 5 * inside.size()) {
      return null;
    }
    PdfRect box = null;
    for (Line l : inside) {
      box = box == null ? l.box() : box.union(l.box());
    }
    List<Float> colEdges = textColumns(inside, box);
    int cols = colEdges.size() - 1;
    if (cols < 2 || cols > 50) {
      return null;
    }
    List<List<String>> grid = new ArrayList<>();
    for (List<Line> row : rows) {
      List<List<Word>> cells = new ArrayList<>();
      for (int c = 0; c < cols; c++) {
        cells.add(new ArrayList<>());
      }
      for (Line l : row) {
        int c = slot(colEdges, l.box().centerX());
        if (!cells.get(c).isEmpty()) {
          return null; // two segments in one column: not a grid
        }
        cells.get(c).addAll(l.words());
      }
      List<String> texts = new ArrayList<>();
      for (List<Word> cell : cells) {
        texts.add(joinWords(cell));
      }
      if (!grid.isEmpty() && texts.get(0).isEmpty() && row.size() == 1) {
        // A wrapped cell's next line belongs to the row above.
        List<String> above = grid.get(grid.size() - 1);
        for (int c = 1; c < cols; c++) {
          if (!texts.get(c).isEmpty()) {
            above.set(c, (above.get(c) + " " + texts.get(c)).strip());
          }
        }
        continue;
      }
      grid.add(texts);
    }
    if (markersOnly(grid)) {
      return null; // bullets or numbers set far from their text: a list, not a table
    }
    return new Table(box, dropEmpty(grid));
  }

  /** A bullet glyph (not a dash, which also stands for nil in a table of figures). */
  private static final Pattern BULLET_GLYPH = Pattern.compile("[•●◦▪■□‣⁃∙·*]");

  /**
   * Joins a bullet standing alone at the left of its baseline to the text that follows it there,
   * however wide the gap: the bullet and its item are one line of a list, not two columns.
   */
  static void joinBullets(List<Line> lines) {
    for (int i = 0; i < lines.size(); i++) {
      Line b = lines.get(i);
      if (!BULLET_GLYPH.matcher(b.text()).matches() || b.rotated() || b.rtl()) {
        continue;
      }
      Line next = null;
      boolean leftmost = true;
      for (Line o : lines) {
        if (o == b || Math.abs(o.baseline() - b.baseline()) > Math.max(2, 0.3f * b.size())) {
          continue;
        }
        leftmost &= o.box().x0() >= b.box().x1();
        if (o.box().x0() >= b.box().x1() && o.box().x0() - b.box().x1() <= 6 * b.size()
            && Character.isLetterOrDigit(o.text().codePointAt(0))
            && (next == null || o.box().x0() < next.box().x0())) {
          next = o;
        }
      }
      if (next == null || !leftmost) {
        continue;
      }
      List<Word> words = new ArrayList<>(b.words());
      words.addAll(next.words());
      Line joined = new Line(words, b.box().union(next.box()), next.baseline(),
          Math.max(b.size(), next.size()), next.bold(), next.italic(), false, false, next.mono());
      lines.set(i, joined);
      lines.remove(next);
      i = -1; // indices moved; the joined line starts with a bullet but has text now
    }
  }

  /** Whether every first cell of a grid of two or more columns is a bullet or a list number. */
  private static boolean markersOnly(List<List<String>> grid) {
    for (List<String> row : grid) {
      String first = row.get(0).strip();
      if (!BULLET.matcher(first).matches()
          && !first.matches("\\(?([a-zA-Z]|\\d{1,3}|[ivxIVX]{1,4})[.)]")) {
        return false;
      }
    }
    return !grid.isEmpty();
  }

  // ---- pictures ----

  /**
   * Clusters the page's images into pictures; a picture takes the short text lines on it (figure
   * labels) except captions, which stay in the flow to be labelled as captions. Paragraph text is
   * never taken: two images merge only when their joint box would swallow no paragraph line, so
   * figures in neighbouring columns stay apart, and a paragraph over an image stays text.
   */
  static List<Picture> pictures(Page page, List<Line> lines) {
    List<PdfRect> frames = frames(page);
    List<PdfRect> framed = new ArrayList<>();
    List<PdfRect> boxes = new ArrayList<>();
    float pageArea = page.width() * page.height();
    for (PdfRect image : page.images()) {
      PdfRect b = image.clip(page.width(), page.height());
      if (b.width() < 8 || b.height() < 8) {
        continue;
      }
      if (b.width() * b.height() > 0.9f * pageArea && !lines.isEmpty()) {
        continue; // a page background behind real text
      }
      // Images often extend past the figure's frame under a soft mask; when a drawn frame holds
      // the image's centre, the frame is the picture's extent.
      PdfRect frame = null;
      for (PdfRect f : frames) {
        if (f.contains(b.centerX(), b.centerY())) {
          frame = f;
        }
      }
      if (frame == null) {
        boxes.add(b);
      } else if (!framed.contains(frame)) {
        framed.add(frame);
      }
    }
    List<Line> paragraphLines = new ArrayList<>();
    for (Line l : lines) {
      if (isParagraphLine(l)) {
        paragraphLines.add(l);
      }
    }
    boxes = mergeNear(boxes, paragraphLines);
    boxes.addAll(framed);
    List<Picture> pictures = new ArrayList<>();
    for (PdfRect box : boxes) {
      // Labels often sit on the figure's edge, half outside the image.
      PdfRect reach = new PdfRect(box.x0() - 2, box.top() - 4, box.x1() + 2, box.bottom() + 4);
      List<Line> inner = new ArrayList<>();
      for (Line l : lines) {
        if (reach.contains(l.box().centerX(), l.box().centerY()) && !isParagraphLine(l)
            && !CAPTION.matcher(l.text()).matches()) {
          inner.add(l);
        }
      }
      lines.removeAll(inner);
      pictures.add(new Picture(box, inner));
    }
    return pictures;
  }

  /**
   * Merges images that touch into one picture, round by round (a merged box may reach further
   * images), each round a single pass over pairs so that a page tiled with many images stays
   * cheap. Boxes are sorted by left edge so that the pass can stop once boxes lie beyond reach.
   */
  private static List<PdfRect> mergeNear(List<PdfRect> boxes, List<Line> paragraphLines) {
    for (int round = 0; round < 8 && boxes.size() > 1; round++) {
      List<PdfRect> sorted = new ArrayList<>(boxes);
      sorted.sort(Comparator.comparingDouble(PdfRect::x0));
      int n = sorted.size();
      int[] parent = new int[n];
      for (int i = 0; i < n; i++) {
        parent[i] = i;
      }
      boolean changed = false;
      for (int i = 0; i < n; i++) {
        PdfRect a = sorted.get(i);
        for (int j = i + 1; j < n && sorted.get(j).x0() <= a.x1() + 6; j++) {
          PdfRect b = sorted.get(j);
          if (find(parent, i) != find(parent, j) && a.near(b, 6)
              && !swallows(a.union(b), a, b, paragraphLines)) {
            parent[find(parent, i)] = find(parent, j);
            changed = true;
          }
        }
      }
      if (!changed) {
        break;
      }
      java.util.Map<Integer, List<PdfRect>> components = new java.util.LinkedHashMap<>();
      for (int i = 0; i < n; i++) {
        components.computeIfAbsent(find(parent, i), k -> new ArrayList<>()).add(sorted.get(i));
      }
      boxes = new ArrayList<>();
      for (List<PdfRect> members : components.values()) {
        // Pairs that merged harmlessly may still, chained together, reach over a paragraph.
        PdfRect union = PdfRect.around(members);
        if (swallowsAny(union, members, paragraphLines)) {
          boxes.addAll(members);
        } else {
          boxes.add(union);
        }
      }
    }
    return boxes;
  }

  private static boolean swallowsAny(PdfRect union, List<PdfRect> members,
      List<Line> paragraphLines) {
    for (Line l : paragraphLines) {
      if (union.overlapArea(l.box()) > 0
          && members.stream().allMatch(m -> m.overlapArea(l.box()) == 0)) {
        return true;
      }
    }
    return false;
  }

  /** A line of running prose rather than a figure label: long and wordy. */
  private static boolean isParagraphLine(Line l) {
    return l.words().size() >= 7 && l.box().width() >= 12 * l.size();
  }

  /** Whether {@code union} covers a paragraph line that neither part covered on its own. */
  private static boolean swallows(PdfRect union, PdfRect a, PdfRect b, List<Line> paragraphLines) {
    return swallowsAny(union, List.of(a, b), paragraphLines);
  }

  /** Boxes drawn with at least two horizontal and two vertical rules around some area. */
  private static List<PdfRect> frames(Page page) {
    List<PdfRect> frames = new ArrayList<>();
    for (List<Ruling> c : components(page.rulings())) {
      if (positions(c, true).size() < 2 || positions(c, false).size() < 2) {
        continue;
      }
      PdfRect box = null;
      for (Ruling r : c) {
        PdfRect rb = r.horizontal() ? new PdfRect(r.from(), r.pos(), r.to(), r.pos())
            : new PdfRect(r.pos(), r.from(), r.pos(), r.to());
        box = box == null ? rb : box.union(rb);
      }
      if (box.width() >= 50 && box.height() >= 50) {
        frames.add(box);
      }
    }
    return frames;
  }

  // ---- blocks ----

  /** Joins consecutive lines of the same column, size and style into paragraph blocks. */
  static List<Block> blocks(List<Line> lines) {
    List<Line> sorted = new ArrayList<>(lines);
    sorted.sort(Comparator.comparingDouble(Line::baseline).thenComparingDouble(l -> l.box().x0()));
    java.util.Map<Integer, Float> pitches = linePitches(sorted);
    List<List<Line>> open = new ArrayList<>();
    List<List<Line>> all = new ArrayList<>();
    for (Line line : sorted) {
      List<Line> best = null;
      float bestOverlap = 0;
      for (List<Line> block : open) {
        Line last = block.get(block.size() - 1);
        if (!continues(block, last, line, pitches)) {
          continue;
        }
        float overlap = Math.min(last.box().x1(), line.box().x1())
            - Math.max(last.box().x0(), line.box().x0());
        if (overlap > bestOverlap) {
          best = block;
          bestOverlap = overlap;
        }
      }
      if (best == null) {
        best = new ArrayList<>();
        open.add(best);
        all.add(best);
      }
      best.add(line);
      final float baseline = line.baseline();
      open.removeIf(b -> baseline - b.get(b.size() - 1).baseline() > 4 * line.size());
    }
    List<Block> blocks = new ArrayList<>();
    for (List<Line> b : all) {
      PdfRect box = null;
      for (Line l : b) {
        box = box == null ? l.box() : box.union(l.box());
      }
      blocks.add(new Block(List.copyOf(b), box));
    }
    return blocks;
  }

  /**
   * The page's usual line pitch per font size (rounded to the point): the most common distance
   * from a line to the next one below it in the same column and size. Leading differs by script
   * and house style (Korean and Japanese are often set at 160-180% of the size), so a fixed
   * ratio would split every paragraph of such a page into single lines.
   */
  static java.util.Map<Integer, Float> linePitches(List<Line> byBaseline) {
    java.util.Map<Integer, java.util.Map<Integer, Integer>> counts = new java.util.HashMap<>();
    for (int i = 0; i < byBaseline.size(); i++) {
      Line a = byBaseline.get(i);
      for (int j = i + 1; j < byBaseline.size(); j++) {
        Line b = byBaseline.get(j);
        float pitch = b.baseline() - a.baseline();
        if (pitch > 2.5f * a.size()) {
          break;
        }
        if (pitch > 0.3f * a.size() && Math.abs(a.size() - b.size()) <= 0.7f
            && Math.min(a.box().x1(), b.box().x1()) - Math.max(a.box().x0(), b.box().x0()) > 0) {
          counts.computeIfAbsent(Math.round(a.size()), k -> new java.util.HashMap<>())
              .merge(Math.round(pitch * 2), 1, Integer::sum);
          break;
        }
      }
    }
    java.util.Map<Integer, Float> out = new java.util.HashMap<>();
    counts.forEach((size, byPitch) -> byPitch.entrySet().stream()
        .filter(e -> e.getValue() >= 3).max(java.util.Map.Entry.comparingByValue())
        .ifPresent(e -> out.put(size, e.getKey() / 2f)));
    return out;
  }

  private static boolean continues(List<Line> block, Line last, Line line,
      java.util.Map<Integer, Float> pitches) {
    float pitch = line.baseline() - last.baseline();
    float size = Math.max(line.size(), last.size());
    float usual = Math.max(pitches.getOrDefault(Math.round(last.size()), 0f),
        pitches.getOrDefault(Math.round(line.size()), 0f));
    // The page's own leading when it is a plausible one, else 1.5 times the size.
    float maxPitch = usual > 1.5f * size && usual <= 2.2f * size ? 1.08f * usual : 1.5f * size;
    if (pitch <= 0.3f * size || pitch > maxPitch) {
      return false;
    }
    if (Math.abs(line.size() - last.size()) > 0.7f || line.emphasised() != last.emphasised()) {
      return false;
    }
    String text = line.text();
    if (LIST_MARKER.matcher(text).matches() || CAPTION.matcher(text).matches()) {
      return false;
    }
    float overlap = Math.min(last.box().x1(), line.box().x1())
        - Math.max(last.box().x0(), line.box().x0());
    if (overlap <= 0) {
      return false;
    }
    boolean listItem = LIST_MARKER.matcher(block.get(0).text()).matches();
    if (line.rtl() && last.rtl()) {
      // Right-to-left paragraphs indent at the right edge and end short on the left.
      float blockX1 = block.get(0).box().x1();
      for (Line l : block) {
        blockX1 = Math.max(blockX1, l.box().x1());
      }
      return listItem || blockX1 - line.box().x1() <= 0.8f * line.size();
    }
    float blockX0 = block.get(0).box().x0();
    for (Line l : block) {
      blockX0 = Math.min(blockX0, l.box().x0());
    }
    // A first-line indent starts a new paragraph; a list item's hanging lines are indented too.
    return listItem || line.box().x0() - blockX0 <= 0.8f * line.size();
  }

  // ---- reading order ----

  /**
   * Orders units by recursive XY cut. Horizontal bands whose units share a column gutter are
   * merged first, so that a two-column page is read column by column even where both columns
   * happen to have a gap at the same height.
   */
  static List<Unit> order(List<? extends Unit> units) {
    List<Unit> out = new ArrayList<>();
    order(new ArrayList<>(units), out, 0);
    return out;
  }

  private static void order(List<Unit> units, List<Unit> out, int depth) {
    if (units.size() <= 1 || depth > 50) {
      units.sort(Comparator.comparingDouble((Unit u) -> u.box().top())
          .thenComparingDouble(u -> u.box().x0()));
      out.addAll(units);
      return;
    }
    List<List<Unit>> bands = split(units, true, 0.5f);
    if (bands.size() == 1) {
      List<List<Unit>> columns = split(units, false, 4);
      if (columns.size() == 1) {
        units.sort(Comparator.comparingDouble((Unit u) -> u.box().top())
            .thenComparingDouble(u -> u.box().x0()));
        out.addAll(units);
      } else {
        for (List<Unit> column : columns) {
          order(column, out, depth + 1);
        }
      }
      return;
    }
    List<List<Unit>> groups = new ArrayList<>();
    for (List<Unit> band : bands) {
      List<Unit> last = groups.isEmpty() ? null : groups.get(groups.size() - 1);
      // A band that holds one column's heading while the other column runs on belongs to the
      // column layout too: join whenever either side has columns and the gutter survives.
      if (last != null
          && (split(last, false, 4).size() > 1 || split(band, false, 4).size() > 1)) {
        List<Unit> joined = new ArrayList<>(last);
        joined.addAll(band);
        if (split(joined, false, 4).size() > 1) {
          groups.set(groups.size() - 1, joined);
          continue;
        }
      }
      groups.add(new ArrayList<>(band));
    }
    if (groups.size() == 1) {
      for (List<Unit> column : split(groups.get(0), false, 4)) {
        order(column, out, depth + 1);
      }
      return;
    }
    for (List<Unit> group : groups) {
      order(group, out, depth + 1);
    }
  }

  /** Splits units at gaps of at least {@code minGap} in their projection on one axis. */
  private static List<List<Unit>> split(List<Unit> units, boolean vertical, float minGap) {
    List<Unit> sorted = new ArrayList<>(units);
    sorted.sort(Comparator.comparingDouble(u -> vertical ? u.box().top() : u.box().x0()));
    List<List<Unit>> parts = new ArrayList<>();
    List<Unit> current = new ArrayList<>();
    float reach = -Float.MAX_VALUE;
    for (Unit u : sorted) {
      float start = vertical ? u.box().top() : u.box().x0();
      float end = vertical ? u.box().bottom() : u.box().x1();
      if (!current.isEmpty() && start - reach >= minGap) {
        parts.add(current);
        current = new ArrayList<>();
      }
      current.add(u);
      reach = Math.max(reach, end);
    }
    parts.add(current);
    return parts;
  }
}
