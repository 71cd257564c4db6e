package dev.quarry.ingest;

/**
 * What commonmark will build of a Markdown source, bounded before it parses, because commonmark
 * builds all of it in one call with nothing to charge on the way:
 *
 * <ul>
 *   <li>its syntax tree: a node costs 50 to 90 bytes (measured on a megabyte of each of a dozen
 *       shapes: lines, list items, emphasis, links, code spans, table cells, tags), and each line
 *       break or inline marker can start one;
 *   <li>each GFM table: commonmark pads every row to the header's width in its tree (a row holding
 *       one cell under a 60,000-column header is 60,000 cells), so a table's width times its rows is
 *       checked against the conversion's per-table limit first, counting every line up to the next
 *       blank one as a row (a line without a pipe continues a table too).
 * </ul>
 */
final class MarkdownBounds {
  /** What one node of commonmark's tree may cost, with room over the 90 bytes measured. */
  static final int NODE_BYTES = 120;
  /** Bytes per character besides the nodes: the source and the nodes' literals. */
  static final int BYTES_PER_CHAR = 4;

  private MarkdownBounds() {}

  static void check(String source, IngestBudget budget) {
    long marks = 0;
    for (int i = 0; i < source.length(); i++) {
      switch (source.charAt(i)) {
        case '\n', '*', '_', '`', '[', ']', '<', '&', '!', '\\', '|', '~' -> marks++;
        default -> { }
      }
    }
    budget.memory(NODE_BYTES * marks + (long) BYTES_PER_CHAR * source.length(), "the Markdown's syntax tree");
    tables(source, budget);
  }

  /** Checks each table's header width times its rows, before commonmark pads them. */
  private static void tables(String source, IngestBudget budget) {
    int start = 0;
    boolean previousBlank = true;
    while (start < source.length()) {
      int end = lineEnd(source, start);
      long columns = previousBlank ? 0 : delimiterColumns(source, start, end);
      if (columns > 0) {
        long rows = 1; // the header
        int next = end + 1;
        while (next < source.length()) {
          int e = lineEnd(source, next);
          if (blank(source, next, e)) {
            break;
          }
          rows++;
          next = e + 1;
        }
        if (IngestBudget.saturatedTimes(columns, rows) > budget.tableCellLimit()) {
          throw budget.tableTooLarge(rows, columns);
        }
      }
      previousBlank = blank(source, start, end);
      start = end + 1;
    }
  }

  private static int lineEnd(String s, int from) {
    int e = s.indexOf('\n', from);
    return e < 0 ? s.length() : e;
  }

  private static boolean blank(String s, int from, int to) {
    for (int i = from; i < to; i++) {
      char c = s.charAt(i);
      if (c != ' ' && c != '\t' && c != '\r' && c != '>') {
        return false;
      }
    }
    return true;
  }

  /**
   * The columns of a table whose delimiter row this line could be (pipes, dashes, colons and
   * spaces, at least one pipe and one dash; quote markers before it), counted generously: one more
   * than its pipes. Zero when it cannot be one.
   */
  private static long delimiterColumns(String s, int from, int to) {
    long pipes = 0;
    boolean dash = false;
    boolean content = false;
    for (int i = from; i < to; i++) {
      char c = s.charAt(i);
      switch (c) {
        case '|' -> {
          pipes++;
          content = true;
        }
        case '-' -> {
          dash = true;
          content = true;
        }
        case ':' -> content = true;
        case ' ', '\t', '\r' -> { }
        case '>' -> {
          if (content) {
            return 0;
          }
        }
        default -> {
          return 0;
        }
      }
    }
    return pipes > 0 && dash ? pipes + 1 : 0;
  }
}
