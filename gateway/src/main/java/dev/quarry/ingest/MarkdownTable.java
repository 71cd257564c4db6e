package dev.quarry.ingest;

import java.util.ArrayList;
import java.util.List;

/**
 * Renders a table grid as a GitHub-style Markdown table, the way docs/CONTRACT.md renders tables: the
 * first row is the header, cells are trimmed, pipes are escaped, newlines become spaces, and short
 * rows are padded so every row has the same number of columns.
 */
public final class MarkdownTable {
  private MarkdownTable() {}

  public static String render(List<List<String>> rows) {
    if (rows.isEmpty()) {
      return "";
    }
    int cols = 0;
    for (List<String> r : rows) {
      cols = Math.max(cols, r.size());
    }
    if (cols == 0) {
      return "";
    }
    List<List<String>> grid = new ArrayList<>();
    for (List<String> r : rows) {
      List<String> cells = new ArrayList<>(cols);
      for (int c = 0; c < cols; c++) {
        cells.add(c < r.size() ? clean(r.get(c)) : "");
      }
      grid.add(cells);
    }
    StringBuilder sb = new StringBuilder();
    appendRow(sb, grid.get(0));
    sb.append('|');
    for (int c = 0; c < cols; c++) {
      sb.append("---|");
    }
    sb.append('\n');
    for (int i = 1; i < grid.size(); i++) {
      appendRow(sb, grid.get(i));
    }
    sb.setLength(sb.length() - 1);
    return sb.toString();
  }

  private static void appendRow(StringBuilder sb, List<String> cells) {
    sb.append('|');
    for (String cell : cells) {
      sb.append(' ').append(cell).append(" |");
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
