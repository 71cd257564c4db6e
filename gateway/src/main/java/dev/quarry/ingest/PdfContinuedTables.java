package dev.quarry.ingest;

import dev.quarry.store.DocItem;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A table that runs over a page break becomes one table item listing every page it is on, so a
 * reader (and the sandbox's {@code items.jsonl}) sees a statement as one table, not two under the
 * same title. A table continues the previous one when it starts the next page and the previous one
 * ended its page, with the same columns, and its first row either repeats the header or is a body
 * row. Between the two only page furniture may stand, or what a continued page repeats: the
 * title and subtitle again, "(continued)", a bare page number. The repeats are dropped with the
 * join (they would open an empty section); the furniture stays.
 */
final class PdfContinuedTables {
  private static final Pattern CONTINUED = Pattern.compile("(?i)\\(?\\bcontinued\\b[^)]*\\)?");
  /** How many items above the first part may be the title and subtitles a later page repeats. */
  private static final int TITLE_ITEMS = 4;

  private PdfContinuedTables() {}

  /**
   * {@code items} with continued tables joined, renumbered 0..n-1 with self_refs per kind in order;
   * {@code grids} holds each table item's cells by its position. A joined table grows in place and
   * is rendered once, at the end: rendering it again at each page it runs over was quadratic in its
   * pages.
   */
  static List<DocItem> join(List<DocItem> items, Map<Integer, List<List<String>>> grids,
      IngestBudget budget) {
    List<DocItem> out = new ArrayList<>(items);
    Set<DocItem> dropped = new HashSet<>();
    // Where a joined table stands in out: its grid is a list of this method's own, rendered at the end.
    Set<Integer> joinedAt = new java.util.TreeSet<>();
    int open = -1; // the table that ended its page, in items
    Map<Integer, Integer> into = new java.util.HashMap<>(); // a joined table's item -> its first part's
    for (int j = 0; j < items.size(); j++) {
      DocItem item = items.get(j);
      if (!item.label().equals("table")) {
        continue;
      }
      int above = j > 0 && items.get(j - 1).label().equals("table")
          ? into.getOrDefault(j - 1, j - 1) : -1;
      if (above >= 0 && repeatsHeader(out.get(above), item, grids)) {
        // The same header again right under a table on its page: the next block of one table
        // (a statement of equity's periods, each opening with its own header row). The repeated
        // header stays as the block's first row, so where one block ends is not lost.
        List<List<String>> joined = growable(out, above, grids, joinedAt);
        joined.addAll(grids.get(item.position()));
        replace(out, above, joined, out.get(above).pageNumbers(), grids);
        dropped.add(item);
        into.put(j, above);
        open = endsPage(items, j) ? above : -1;
        continue;
      }
      DocItem first = open < 0 ? null : out.get(open);
      List<Integer> repeats = first == null ? null : repeatsBetween(items, open, j);
      List<List<String>> grid = grids.get(item.position());
      List<List<String>> firstGrid = first == null ? null : grids.get(first.position());
      if (repeats != null && nextPage(first, item) && grid != null && firstGrid != null
          && width(grid) == width(firstGrid) && !grid.isEmpty()) {
        boolean sameHeader = grid.get(0).equals(firstGrid.get(0));
        if (sameHeader || bodyRow(grid.get(0))) {
          List<List<String>> joined = growable(out, open, grids, joinedAt);
          joined.addAll(sameHeader ? grid.subList(1, grid.size()) : grid);
          Set<Integer> pages = new LinkedHashSet<>(first.pageNumbers());
          pages.addAll(item.pageNumbers());
          replace(out, open, joined, List.copyOf(pages), grids);
          dropped.add(item);
          into.put(j, open);
          for (int r : repeats) {
            dropped.add(items.get(r));
          }
          open = endsPage(items, j) ? open : -1;
          continue;
        }
      }
      open = endsPage(items, j) ? j : -1;
    }
    if (dropped.isEmpty()) {
      return items;
    }
    for (int at : joinedAt) {
      DocItem first = out.get(at);
      out.set(at, new DocItem(first.position(), first.selfRef(), "table",
          TableGrid.markdown(budget, grids.get(first.position())), first.pageNumbers(), 0, first.treeDepth()));
    }
    List<DocItem> kept = new ArrayList<>();
    for (DocItem i : out) {
      if (!dropped.contains(i)) {
        kept.add(i);
      }
    }
    return renumbered(kept);
  }

  /** The grid of {@code out}'s table at {@code at} as a list this join may grow. */
  private static List<List<String>> growable(List<DocItem> out, int at,
      Map<Integer, List<List<String>>> grids, Set<Integer> joinedAt) {
    List<List<String>> grid = grids.get(out.get(at).position());
    return joinedAt.add(at) ? new ArrayList<>(grid) : grid;
  }

  /**
   * {@code out}'s table at {@code at} with the cells {@code joined} on {@code pages}; its text is
   * rendered once the join is done.
   */
  private static void replace(List<DocItem> out, int at, List<List<String>> joined,
      List<Integer> pages, Map<Integer, List<List<String>>> grids) {
    DocItem first = out.get(at);
    out.set(at, new DocItem(first.position(), first.selfRef(), "table", first.text(), pages, 0,
        first.treeDepth()));
    grids.put(first.position(), joined);
  }

  /**
   * Whether {@code next}, on the page where {@code table} ends, opens with {@code table}'s header
   * row again: the same columns, a first row of text over them (not a line item's figures).
   */
  private static boolean repeatsHeader(DocItem table, DocItem next,
      Map<Integer, List<List<String>>> grids) {
    List<List<String>> a = grids.get(table.position());
    List<List<String>> b = grids.get(next.position());
    if (a == null || b == null || a.isEmpty() || b.size() < 2 || width(a) != width(b)
        || next.pageNumbers().isEmpty() || next.pageNumbers().get(0) != lastPage(table)) {
      return false;
    }
    List<String> header = a.get(0);
    return header.equals(b.get(0)) && !bodyRow(header)
        && header.subList(1, header.size()).stream().anyMatch(c -> !c.isBlank());
  }

  private static int width(List<List<String>> grid) {
    int w = 0;
    for (List<String> r : grid) {
      w = Math.max(w, r.size());
    }
    return w;
  }

  /** A row with a figure past its label: a line item, not a header. */
  private static boolean bodyRow(List<String> row) {
    for (int c = 1; c < row.size(); c++) {
      if (row.get(c).matches(".*\\d.*") && !row.get(c).matches(".*\\b(19|20)\\d\\d\\b.*")) {
        return true;
      }
    }
    return false;
  }

  private static boolean nextPage(DocItem first, DocItem next) {
    if (first.pageNumbers().isEmpty() || next.pageNumbers().isEmpty()) {
      return false;
    }
    return next.pageNumbers().get(0) == first.pageNumbers().get(first.pageNumbers().size() - 1) + 1;
  }

  private static int lastPage(DocItem i) {
    return i.pageNumbers().isEmpty() ? -1 : i.pageNumbers().get(i.pageNumbers().size() - 1);
  }

  /** Whether nothing but what {@link #passable} allows follows table {@code at} on its page. */
  private static boolean endsPage(List<DocItem> items, int at) {
    int page = lastPage(items.get(at));
    for (int k = at + 1; k < items.size() && lastPage(items.get(k)) == page; k++) {
      if (!passable(items.get(k))) {
        return false;
      }
    }
    return true;
  }

  /**
   * The positions between the two parts that are repeats of the first part's title lines, or
   * {@code null} when something else stands between them (a table does not continue over text).
   */
  private static List<Integer> repeatsBetween(List<DocItem> items, int first, int next) {
    Set<String> titles = new HashSet<>();
    for (int k = Math.max(0, first - TITLE_ITEMS); k < first; k++) {
      if (!items.get(k).label().equals("table")) {
        titles.add(key(items.get(k).text()));
      }
    }
    List<Integer> repeats = new ArrayList<>();
    for (int k = first + 1; k < next; k++) {
      DocItem i = items.get(k);
      if (lastPage(i) > lastPage(items.get(first)) && repeats(titles, key(i.text()))
          && !i.label().startsWith("page_")) {
        repeats.add(k);
      } else if (!passable(i)) {
        return null;
      }
    }
    return repeats;
  }

  /**
   * Whether {@code key} is one of the title lines again, give or take what a page adds or leaves
   * out at its end ("(in millions)" moved onto the subtitle).
   */
  private static boolean repeats(Set<String> titles, String key) {
    for (String t : titles) {
      if (t.equals(key) || Math.min(t.length(), key.length()) >= 12
          && (t.startsWith(key) || key.startsWith(t))) {
        return true;
      }
    }
    return false;
  }

  /** Page furniture, a bare page number, or a short "(continued …)" note. */
  private static boolean passable(DocItem i) {
    String text = i.text().strip();
    return i.label().equals("page_header") || i.label().equals("page_footer")
        || i.label().equals("footnote")
        || text.matches("\\d{1,4}|[ivxlc]{1,6}")
        || CONTINUED.matcher(text).find() && text.split("\\s+").length <= 8;
  }

  private static String key(String text) {
    return CONTINUED.matcher(text).replaceAll("").replaceAll("\\s+", " ").strip()
        .toLowerCase(Locale.ROOT);
  }

  /** Positions 0..n-1 again, and self_refs numbered per kind in reading order. */
  private static List<DocItem> renumbered(List<DocItem> items) {
    List<DocItem> out = new ArrayList<>(items.size());
    Map<String, Integer> counters = new java.util.HashMap<>();
    for (DocItem i : items) {
      String kind = i.selfRef().substring(0, i.selfRef().lastIndexOf('/') + 1);
      int n = counters.merge(kind, 1, Integer::sum) - 1;
      out.add(new DocItem(out.size(), kind + n, i.label(), i.text(), i.pageNumbers(),
          i.headingLevel(), i.treeDepth()));
    }
    return out;
  }
}
