package dev.quarry.ingest;

/**
 * What commonmark will build of a Markdown source, bounded before it parses, because commonmark
 * builds all of it in one call with nothing to charge on the way:
 *
 * <ul>
 *   <li>its syntax tree: a node costs 40 to 160 bytes and a megabyte of source held 10 to 64 MB
 *       (measured on a megabyte of each of 25 shapes: lines, quotes nested a million deep, list
 *       items, numbered items, emphasis, links, reference definitions, code spans, fences, table
 *       cells, tags, breaks, headings), and each line break or marker can start one;
 *   <li>each GFM table: commonmark pads every row to the header's width in its tree (a row holding
 *       one cell under a 60,000-column header is 60,000 cells), so a table's width times its rows is
 *       checked against the conversion's per-table limit first, counting every line up to the next
 *       blank one as a row (a line without a pipe continues a table too).
 * </ul>
 */
final class MarkdownBounds {
  /** What one node of commonmark's tree may cost, counted per line break or marker. */
  static final int NODE_BYTES = 130;
  /** Bytes per character besides the nodes: the source and the nodes' literals. */
  static final int BYTES_PER_CHAR = 4;

  private MarkdownBounds() {}

  static void check(String source, IngestBudget budget) {
    long marks = 0;
    for (int i = 0; i < source.length(); i++) {
      switch (source.charAt(i)) {
        case '\n', '*', '_', '`', '[', ']', '<', '&', '!', '\\', '|', '~', '>', '-', '+', '#', '.', ')' -> marks++;
        default -> { }
      }
    }
    budget.memory(NODE_BYTES * marks + (long) BYTES_PER_CHAR * source.length(), "the Markdown's syntax tree");
    tables(source, budget);
    emphasis(source, budget);
  }

  /**
   * Refuses a run of emphasis delimiters long enough to nest emphasis deeper than {@link
   * IngestBudget#MAX_NESTING} levels: commonmark merges the text of nested emphasis by recursion, so
   * 100,000 asterisks each side of a word overflow its stack. (Nesting built another way still ends
   * in a stack overflow, which is refused as malformed too, only less precisely named.)
   */
  private static void emphasis(String source, IngestBudget budget) {
    int run = 0;
    for (int i = 0; i < source.length(); i++) {
      char c = source.charAt(i);
      if (c == '*' || c == '_') {
        if (++run > 2 * IngestBudget.MAX_NESTING) {
          budget.nesting((run + 1) / 2, "a run of " + run + " emphasis marks or more, each able to open emphasis"
              + " inside the last");
        }
      } else {
        run = 0;
      }
    }
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
