package dev.quarry.ingest;

import dev.quarry.store.DocItem;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Cuts a document into chunks for embedding and full-text search.
 * <ul>
 *   <li>A chunk never crosses a section boundary: every header starts a new run of chunks.
 *   <li>A table is a chunk of its own, whole; a table over {@link #MAX_TABLE_CHARS} is split by
 *       rows into pieces that each repeat the header row, so every piece still reads as a table.
 *   <li>Chunks aim at {@link #MAX_CHARS} characters at most, evened out within a section so the
 *       last chunk is not a stub; both bundled models read 512 word pieces (about 2,000
 *       characters of English), so a chunk reaches the model whole. (all-MiniLM-L6-v2 was trained on
 *       128; measured at this length, its hybrid ranking still matches bge-small's: BENCHMARKS.md.)
 *       A single paragraph longer than that is split at sentence ends.
 *   <li>Every chunk's content starts with its heading path, so a paragraph that only makes sense
 *       under its heading is still found by it. The section's own header is not repeated as text.
 *   <li>Page headers and footers are furniture: never chunked. Footnotes are real content and are.
 * </ul>
 */
public final class Chunker {
  public static final int MAX_CHARS = 1_500;
  public static final int MAX_TABLE_CHARS = 3_000;
  private static final String SEPARATOR = "\n\n";

  private Chunker() {}

  public static List<Chunk> chunk(List<DocItem> items, Toc toc) {
    List<Chunk> out = new ArrayList<>();
    int i = 0;
    while (i < items.size()) {
      int end = i + 1;
      while (end < items.size() && !items.get(end).isHeader()) {
        end++;
      }
      new Section(items.subList(i, end), toc.headingPaths().get(i), out).cut();
      i = end;
    }
    return out;
  }

  /** The most of one heading that a chunk's heading path carries; a real heading fits whole. */
  static final int MAX_HEADING_CHARS = 200;

  /** The most a heading path takes in all, its " > " separators included. */
  static final int MAX_PATH_CHARS = 600;

  /**
   * A section's heading path as its chunks carry it (their {@code headings}, and the start of their
   * content): each heading cut to {@link #MAX_HEADING_CHARS} at a word, and the outermost headings
   * left out while the path is longer than {@link #MAX_PATH_CHARS}. Real paths are unchanged;
   * without the bound, a document of nested headings of 100,000 characters each put all of them
   * in every chunk of the innermost section.
   */
  static List<String> boundedPath(List<String> headings) {
    List<String> cut = headings.stream().map(h -> Chunk.cut(h, MAX_HEADING_CHARS)).toList();
    int from = 0;
    while (from < cut.size() - 1 && String.join(" > ", cut.subList(from, cut.size())).length() > MAX_PATH_CHARS) {
      from++;
    }
    return cut.subList(from, cut.size());
  }

  private static boolean skipped(DocItem item) {
    return item.label().equals("page_header") || item.label().equals("page_footer")
        || item.text().isBlank();
  }

  /** One run of items from a header to the next header; its chunks go to {@code out}. */
  private static final class Section {
    private final List<DocItem> items;
    private final List<String> headings;
    private final String prefix;
    private final List<Chunk> out;
    /** Items of the chunk being filled; the section header rides along without text. */
    private final List<DocItem> pending = new ArrayList<>();
    private int pendingChars;
    private boolean pendingHasBody;

    Section(List<DocItem> items, List<String> headings, List<Chunk> out) {
      this.items = items;
      headings = boundedPath(headings);
      this.headings = headings;
      this.prefix = headings.isEmpty() ? "" : String.join(" > ", headings) + SEPARATOR;
      this.out = out;
    }

    void cut() {
      int k = 0;
      while (k < items.size()) {
        DocItem item = items.get(k);
        if (skipped(item)) {
          k++;
        } else if (item.label().equals("section_header") && k == 0) {
          pending.add(item);
          k++;
        } else if (item.label().equals("table")) {
          flush();
          table(item);
          k++;
        } else if (prefix.length() + item.text().length() > MAX_CHARS) {
          flush();
          longText(item);
          k++;
        } else {
          k = run(k);
        }
      }
      flush();
    }

    /** Packs the ordinary items from {@code k} up to the next table or long item, evenly. */
    private int run(int k) {
      int end = k;
      int total = 0;
      while (end < items.size()) {
        DocItem it = items.get(end);
        if (!skipped(it)
            && (it.label().equals("table") || prefix.length() + it.text().length() > MAX_CHARS)) {
          break;
        }
        if (!skipped(it)) {
          total += it.text().length() + SEPARATOR.length();
        }
        end++;
      }
      int room = MAX_CHARS - prefix.length();
      int pieces = Math.max(1, (total + room - 1) / room);
      int target = total / pieces;
      for (int j = k; j < end; j++) {
        DocItem it = items.get(j);
        if (skipped(it)) {
          continue;
        }
        int add = it.text().length() + (pendingHasBody ? SEPARATOR.length() : 0);
        if (pendingHasBody && (pendingChars + add > room || pendingChars >= target)) {
          flush();
          add = it.text().length();
        }
        pending.add(it);
        pendingChars += add;
        pendingHasBody = true;
      }
      return end;
    }

    private void table(DocItem item) {
      if (prefix.length() + item.text().length() <= MAX_TABLE_CHARS) {
        emit(item, item.text());
        return;
      }
      List<String> lines = item.text().lines().toList();
      int headerLines = lines.size() > 1 && TableGrid.isRule(lines.get(1), 1, true) ? 2 : 1;
      String header = String.join("\n", lines.subList(0, Math.min(headerLines, lines.size())));
      StringBuilder piece = new StringBuilder(header);
      boolean hasRows = false;
      for (String row : lines.subList(Math.min(headerLines, lines.size()), lines.size())) {
        if (hasRows && prefix.length() + piece.length() + 1 + row.length() > MAX_CHARS) {
          emit(item, piece.toString());
          piece = new StringBuilder(header);
          hasRows = false;
        }
        piece.append('\n').append(row);
        hasRows = true;
      }
      emit(item, piece.toString());
    }

    /** A paragraph too long for one chunk: pieces cut at sentence ends, else at spaces. */
    private void longText(DocItem item) {
      String text = item.text().strip();
      int room = Math.max(200, MAX_CHARS - prefix.length());
      int from = 0;
      while (from < text.length()) {
        int to = Math.min(text.length(), from + room);
        if (to < text.length()) {
          to = cutPoint(text, from, to);
        }
        emit(item, text.substring(from, to).strip());
        from = to;
        while (from < text.length() && Character.isWhitespace(text.charAt(from))) {
          from++;
        }
      }
    }

    private static int cutPoint(String text, int from, int to) {
      int half = from + (to - from) / 2;
      for (int c = to; c > half; c--) {
        char prev = text.charAt(c - 1);
        if ((prev == '.' || prev == '?' || prev == '!' || prev == '\n')
            && Character.isWhitespace(text.charAt(c))) {
          return c;
        }
      }
      for (int c = to; c > half; c--) {
        if (Character.isWhitespace(text.charAt(c))) {
          return c;
        }
      }
      // No space to cut at: anywhere, but not between the two halves of a surrogate pair.
      return Character.isLowSurrogate(text.charAt(to)) && Character.isHighSurrogate(text.charAt(to - 1))
          ? to - 1 : to;
    }

    /** One chunk holding {@code body} of a single item (plus a section header waiting for text). */
    private void emit(DocItem item, String body) {
      pending.add(item);
      List<DocItem> members = List.copyOf(pending);
      pending.clear();
      pendingChars = 0;
      pendingHasBody = false;
      add(members, body);
    }

    private void flush() {
      if (!pendingHasBody) {
        return; // a header alone is carried into the section's next chunk, or dropped at its end
      }
      StringBuilder body = new StringBuilder();
      for (DocItem it : pending) {
        if (it.label().equals("section_header") && it == items.get(0)) {
          continue;
        }
        if (!body.isEmpty()) {
          body.append(SEPARATOR);
        }
        body.append(it.text());
      }
      List<DocItem> members = List.copyOf(pending);
      pending.clear();
      pendingChars = 0;
      pendingHasBody = false;
      add(members, body.toString());
    }

    private void add(List<DocItem> members, String body) {
      Set<Integer> pages = new TreeSet<>();
      Set<String> labels = new LinkedHashSet<>();
      List<String> refs = new ArrayList<>();
      for (DocItem it : members) {
        pages.addAll(it.pageNumbers());
        labels.add(it.label());
        refs.add(it.selfRef());
      }
      int start = members.get(0).position();
      int end = members.get(members.size() - 1).position() + 1;
      out.add(new Chunk(out.size(), start, end, headings, prefix + body, List.copyOf(pages),
          refs, List.copyOf(labels)));
    }
  }
}
