package dev.quarry.ingest;

import dev.quarry.ingest.PdfLayout.Block;
import dev.quarry.ingest.PdfLayout.Line;
import dev.quarry.ingest.PdfLayout.Word;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Code listings of a PDF whose body is set in a proportional font: runs of lines set in a
 * fixed-pitch font, one below the other in one column. Laid out as prose they would lose what
 * makes them code (one statement per line, the indentation); as columns they would read as a
 * table. A listing becomes one block, one line per row, and its text keeps the rows and each row's
 * indentation and inner spacing, measured in the font's own character width.
 *
 * <p>A run of fixed-pitch lines that is mostly figures is left to table detection (a statement set
 * in Courier is a table, not code); a single fixed-pitch line counts only when it holds code
 * punctuation, so a heading or a file name set in a fixed-pitch font stays what it was.
 */
final class PdfCode {
  private static final Pattern CODE_PUNCTUATION = Pattern.compile("[(){}\\[\\]=;<>$#/\\\\:]");
  /** Below this share of words that are figures, a fixed-pitch run is code rather than a table. */
  private static final double MOST_FIGURES = 0.4;
  /** The most spaces one indentation or gap becomes (a wide listing has lines of 200 characters). */
  static final int MAX_COLUMNS = 200;

  private PdfCode() {}

  /**
   * The page's code listings, each a block with one line per row, best first by position; removes
   * the lines they hold from {@code lines}.
   */
  static List<Block> find(List<Line> lines) {
    List<Line> mono = new ArrayList<>();
    for (Line l : lines) {
      if (l.mono() && !l.rotated() && !l.words().isEmpty()) {
        mono.add(l);
      }
    }
    if (mono.isEmpty()) {
      return List.of();
    }
    Map<Line, List<Line>> sources = new IdentityHashMap<>();
    List<Line> rows = rows(mono, sources);
    List<Block> listings = new ArrayList<>();
    List<Line> run = new ArrayList<>();
    for (Line row : rows) {
      if (!run.isEmpty() && !continues(run, row, lines)) {
        take(run, listings);
        run = new ArrayList<>();
      }
      run.add(row);
    }
    take(run, listings);
    Set<Line> taken = Collections.newSetFromMap(new IdentityHashMap<>());
    for (Block b : listings) {
      for (Line row : b.lines()) {
        taken.addAll(sources.get(row));
      }
    }
    lines.removeIf(taken::contains);
    return listings;
  }

  /**
   * A listing's text: its rows in order, each indented by its distance from the listing's left
   * edge in character widths, its words spaced as drawn; a gap of more than a row's pitch between
   * two rows is kept as blank lines.
   */
  static String text(Block listing) {
    float width = charWidth(listing);
    float left = Float.MAX_VALUE;
    for (Line row : listing.lines()) {
      left = Math.min(left, row.box().x0());
    }
    float pitch = pitch(listing.lines());
    StringBuilder sb = new StringBuilder();
    Line previous = null;
    for (Line row : listing.lines()) {
      if (previous != null) {
        sb.append('\n');
        float gap = row.baseline() - previous.baseline();
        int blanks = pitch > 0 ? Math.min(3, Math.round(gap / pitch) - 1) : 0;
        sb.append("\n".repeat(Math.max(0, blanks)));
      }
      sb.append(" ".repeat(columns(row.box().x0() - left, width)));
      float end = Float.NaN;
      for (Word w : row.words()) {
        if (!Float.isNaN(end)) {
          sb.append(" ".repeat(Math.max(1, columns(w.box().x0() - end, width))));
        }
        sb.append(w.text());
        end = w.box().x1();
      }
      previous = row;
    }
    return sb.toString();
  }

  private static void take(List<Line> run, List<Block> listings) {
    if (run.isEmpty() || !isCode(run)) {
      return;
    }
    PdfRect box = null;
    for (Line row : run) {
      box = box == null ? row.box() : box.union(row.box());
    }
    listings.add(new Block(List.copyOf(run), box));
  }

  private static boolean isCode(List<Line> run) {
    int words = 0;
    int figures = 0;
    for (Line row : run) {
      for (Word w : row.words()) {
        words++;
        figures += PdfLayout.FIGURE.matcher(w.text()).matches() ? 1 : 0;
      }
    }
    if (words == 0 || figures >= MOST_FIGURES * words) {
      return false;
    }
    // Rows of a character or two are list markers (Word sets its "o" bullets in Courier New).
    List<Line> substantive = run.stream().filter(r -> r.text().strip().length() >= 3).toList();
    return substantive.size() >= 2 || (substantive.size() == 1 && run.size() == 1
        && run.get(0).words().size() >= 2 && CODE_PUNCTUATION.matcher(run.get(0).text()).find());
  }

  /**
   * Whether {@code row} continues the listing above it: the same size, within a few rows' pitch
   * (a listing has blank lines), not left of it by more than a character, overlapping it, and with
   * no other text in between.
   */
  private static boolean continues(List<Line> run, Line row, List<Line> all) {
    Line last = run.get(run.size() - 1);
    float size = Math.max(row.size(), last.size());
    float gap = row.baseline() - last.baseline();
    if (Math.abs(row.size() - last.size()) > 0.7f || gap <= 0.3f * size || gap > 3.2f * size) {
      return false;
    }
    float left = Float.MAX_VALUE;
    float right = -Float.MAX_VALUE;
    for (Line r : run) {
      left = Math.min(left, r.box().x0());
      right = Math.max(right, r.box().x1());
    }
    if (row.box().x0() < left - size || row.box().x0() > right || row.box().x1() < left) {
      return false;
    }
    for (Line l : all) {
      if (!l.mono() && l.baseline() > last.baseline() + 0.3f * size
          && l.baseline() < row.baseline() - 0.3f * size
          && l.box().x1() > left && l.box().x0() < right) {
        return false; // prose between the two rows: two listings
      }
    }
    return true;
  }

  /**
   * Fixed-pitch lines merged by baseline: a row split at wide gaps is one row of a listing. Each
   * row's lines go to {@code sources}, so that a listing takes exactly the lines it is made of.
   */
  private static List<Line> rows(List<Line> mono, Map<Line, List<Line>> sources) {
    List<Line> sorted = new ArrayList<>(mono);
    sorted.sort(Comparator.comparingDouble(Line::baseline).thenComparingDouble(l -> l.box().x0()));
    List<List<Line>> groups = new ArrayList<>();
    for (Line l : sorted) {
      List<Line> group = groups.isEmpty() ? null : groups.get(groups.size() - 1);
      if (group != null && sameRow(group.get(0), l) && near(group, l)) {
        group.add(l);
      } else {
        groups.add(new ArrayList<>(List.of(l)));
      }
    }
    List<Line> rows = new ArrayList<>(groups.size());
    for (List<Line> g : groups) {
      g.sort(Comparator.comparingDouble(l -> l.box().x0()));
      List<Word> words = new ArrayList<>();
      PdfRect box = null;
      float size = 0;
      for (Line l : g) {
        words.addAll(l.words());
        box = box == null ? l.box() : box.union(l.box());
        size = Math.max(size, l.size());
      }
      Line row = new Line(List.copyOf(words), box, g.get(0).baseline(), size, false, false, false,
          false, true);
      rows.add(row);
      sources.put(row, g);
    }
    return rows;
  }

  /** Another segment of the same row: not farther right than a third of a line's width. */
  private static boolean near(List<Line> group, Line l) {
    Line last = group.get(group.size() - 1);
    return l.box().x0() - last.box().x1() <= 40 * l.size();
  }

  private static boolean sameRow(Line a, Line b) {
    return Math.abs(a.baseline() - b.baseline()) <= 0.3f * Math.max(a.size(), b.size());
  }

  /** The font's character width: the median over the listing's words of width per character. */
  private static float charWidth(Block listing) {
    List<Float> widths = new ArrayList<>();
    for (Line row : listing.lines()) {
      for (Word w : row.words()) {
        int n = w.text().codePointCount(0, w.text().length());
        if (n > 0 && w.box().width() > 0) {
          widths.add(w.box().width() / n);
        }
      }
    }
    if (widths.isEmpty()) {
      return 0.6f * listing.lines().get(0).size();
    }
    Float[] sorted = widths.toArray(Float[]::new);
    Arrays.sort(sorted);
    // A fixed-pitch character is about 0.6 of its size wide; far narrower is a squeezed drawing.
    float size = listing.lines().get(0).size();
    return Math.max(sorted[sorted.length / 2], 0.3f * size);
  }

  /** The smallest distance between consecutive rows: the listing's own line pitch. */
  private static float pitch(List<Line> rows) {
    float pitch = Float.MAX_VALUE;
    for (int i = 1; i < rows.size(); i++) {
      pitch = Math.min(pitch, rows.get(i).baseline() - rows.get(i - 1).baseline());
    }
    return pitch == Float.MAX_VALUE ? 0 : pitch;
  }

  /**
   * Spaces for a distance, at most {@link #MAX_COLUMNS}: a listing's layout is its author's, and a
   * glyph drawn squeezed to nothing must not turn one gap into millions of spaces.
   */
  private static int columns(float distance, float charWidth) {
    return charWidth <= 0 ? 0 : (int) Math.min(MAX_COLUMNS, Math.max(0, Math.round(distance / charWidth)));
  }
}
