package dev.quarry.ingest;

import dev.quarry.store.DocItem;
import java.util.ArrayList;
import java.util.List;

/**
 * The bounds on what one converted document may be, applied to every converted document before
 * anything is stored: its text, items and page numbers in all (a refusal beyond them), and each
 * item's text (cut into pieces beyond it).
 *
 * <p>No item's text is longer than {@link #MAX_ITEM_CHARS}. A longer one (a text file without
 * blank lines, a log, a listing, a table of thousands of rows) becomes consecutive items with the
 * same label, self_ref, pages, heading level and depth, cut at a line break where there is one in
 * the second half of the allowed length, else at a space there, else at the bound itself (never
 * inside a surrogate pair). Each piece of a Markdown table starts with the table's header row and
 * its separator, so every piece is a table of its own. Nothing is dropped but the whitespace at a
 * cut.
 *
 * <p>Why: an item is read back whole wherever it is shown (a search hit's context holds all of its
 * own items, the document view lists them), so one item of tens of megabytes made every search
 * that reached it return that much, and past the PostgreSQL client's 20,000,000-character limit on
 * a JSON string it made every search of its tenant fail.
 */
public final class ItemBounds {
  /** About 50 pages of prose; 10x the default context budget, 20x the largest chunk table. */
  public static final int MAX_ITEM_CHARS = 100_000;

  private ItemBounds() {}

  /**
   * The most text one document may convert to, in all: about 5,000 pages of prose, well past the
   * largest filing or book, and a bound on what a small hostile source can expand into (a table
   * cell spanning 20,000 rows, a caption referenced a thousand times).
   */
  public static final long MAX_DOCUMENT_CHARS = 10_000_000;

  /**
   * How many characters of text a source may convert to per byte of itself, past {@link
   * #FREE_CHARS}: real sources convert to less text than their bytes (markup, fonts, compression
   * that text does not beat by much); 20 leaves room for tables rendered with pipes. A table cell
   * spanning 20,000 rows made 486 bytes into 1,080,000 characters and 215 s of embedding.
   */
  public static final int CHARS_PER_SOURCE_BYTE = 20;

  /** Text any source may convert to whatever its size: about 130 chunks. */
  public static final long FREE_CHARS = 200_000;

  /** The most text a source of {@code sourceBytes} bytes may convert to. */
  public static long maxChars(long sourceBytes) {
    return Math.min(MAX_DOCUMENT_CHARS, Math.max(FREE_CHARS, CHARS_PER_SOURCE_BYTE * sourceBytes));
  }

  /** The most items one document may have (a page holds tens; 2,000 pages of them fit). */
  public static final int MAX_ITEMS = 200_000;

  /** The most page numbers one item may list, as many as a PDF may have pages. */
  public static final int MAX_ITEM_PAGES = PdfConverter.MAX_PAGES;

  /** The most page numbers all of a document's items may list together. */
  public static final long MAX_PAGE_REFERENCES = 1_000_000;

  /** The longest self_ref and label kept: DoclingDocument's are a dozen characters or two. */
  public static final int MAX_REF_CHARS = 64;

  /**
   * {@code doc} with every item within the bound (itself when all were already), or a refusal
   * naming the file when the document as a whole is beyond what one document may be: more text,
   * items or page numbers than the limits above, or a self_ref or label longer than a
   * DoclingDocument's. Items list each page once, in order.
   */
  public static ConvertedDocument apply(String fileName, ConvertedDocument doc) throws IngestException {
    return apply(fileName, doc, Long.MAX_VALUE / CHARS_PER_SOURCE_BYTE);
  }

  /** As {@link #apply(String, ConvertedDocument)}, for a source of {@code sourceBytes} bytes: its text in all at most {@link #maxChars}. */
  public static ConvertedDocument apply(String fileName, ConvertedDocument doc, long sourceBytes)
      throws IngestException {
    List<DocItem> items = doc.items();
    if (items.size() > MAX_ITEMS) {
      throw new IngestException(IngestException.Reason.TOO_LARGE, fileName, "converts to "
          + items.size() + " items; the limit is " + MAX_ITEMS + " for one document");
    }
    long chars = 0;
    boolean pagesInOrder = true;
    for (DocItem it : items) {
      chars += it.text().length();
      if (it.selfRef().length() > MAX_REF_CHARS || it.label().length() > MAX_REF_CHARS) {
        throw new IngestException(IngestException.Reason.MALFORMED, fileName, "item " + it.position()
            + " has a self_ref or label longer than " + MAX_REF_CHARS + " characters");
      }
      List<Integer> pages = it.pageNumbers();
      if (pages.size() > MAX_ITEM_PAGES) {
        throw new IngestException(IngestException.Reason.MALFORMED, fileName, "item " + it.position()
            + " lists " + pages.size() + " pages; the limit is " + MAX_ITEM_PAGES);
      }
      for (int i = 1; i < pages.size() && pagesInOrder; i++) {
        pagesInOrder = pages.get(i) > pages.get(i - 1);
      }
    }
    long maxChars = maxChars(sourceBytes);
    if (chars > maxChars) {
      throw new IngestException(IngestException.Reason.TOO_LARGE, fileName, "converts to " + chars
          + " characters of text; the limit is " + maxChars + " for one document"
          + (maxChars < MAX_DOCUMENT_CHARS ? " of " + sourceBytes + " bytes (" + CHARS_PER_SOURCE_BYTE
              + " a byte, " + FREE_CHARS + " at least)" : ""));
    }
    ConvertedDocument ordered = pagesInOrder ? doc : new ConvertedDocument(doc.title(), doc.sourceType(),
        items.stream().map(it -> new DocItem(it.position(), it.selfRef(), it.label(), it.text(),
            List.copyOf(new java.util.TreeSet<>(it.pageNumbers())), it.headingLevel(), it.treeDepth())).toList(),
        doc.undecodableByPage());
    ConvertedDocument bounded = apply(ordered, MAX_ITEM_CHARS);
    long pageReferences = 0;
    for (DocItem it : bounded.items()) {
      pageReferences += it.pageNumbers().size(); // pieces repeat their item's pages
    }
    if (pageReferences > MAX_PAGE_REFERENCES) {
      throw new IngestException(IngestException.Reason.TOO_LARGE, fileName, "its items list "
          + pageReferences + " page numbers in all; the limit is " + MAX_PAGE_REFERENCES);
    }
    return bounded;
  }

  static ConvertedDocument apply(ConvertedDocument doc, int max) {
    boolean within = doc.items().stream().allMatch(it -> it.text().length() <= max);
    if (within) {
      return doc;
    }
    List<DocItem> out = new ArrayList<>(doc.items().size() + 16);
    for (DocItem it : doc.items()) {
      for (String piece : pieces(it.label(), it.text(), max)) {
        out.add(new DocItem(out.size(), it.selfRef(), it.label(), piece, it.pageNumbers(),
            it.headingLevel(), it.treeDepth()));
      }
    }
    return new ConvertedDocument(doc.title(), doc.sourceType(), out, doc.undecodableByPage());
  }

  /** {@code text} as pieces of at most {@code max} characters (itself alone when it fits). */
  static List<String> pieces(String label, String text, int max) {
    if (max < 2) {
      throw new IllegalArgumentException("max must be at least 2, got " + max);
    }
    if (text.length() <= max) {
      return List.of(text);
    }
    String header = label.equals("table") ? tableHeader(text) : null;
    if (header != null && header.length() <= max / 2) {
      return tablePieces(text, header, max);
    }
    return textPieces(text, max);
  }

  /** The header row and separator line of a Markdown table, with their newline; else null. */
  private static String tableHeader(String text) {
    int first = text.indexOf('\n');
    if (first < 0) {
      return null;
    }
    int second = text.indexOf('\n', first + 1);
    if (second < 0) {
      return null;
    }
    String separator = text.substring(first + 1, second).strip();
    return TableGrid.isRule(separator, 3, false)
        ? text.substring(0, second + 1) : null;
  }

  /** Rows after the header, as many a piece as fit after the header; an overlong row is cut. */
  private static List<String> tablePieces(String text, String header, int max) {
    List<String> out = new ArrayList<>();
    StringBuilder piece = new StringBuilder(header);
    int start = header.length();
    while (start < text.length()) {
      int end = text.indexOf('\n', start);
      end = end < 0 ? text.length() : end + 1;
      String row = text.substring(start, end);
      start = end;
      if (piece.length() + row.length() > max && piece.length() > header.length()) {
        out.add(piece.toString().stripTrailing());
        piece.setLength(0);
        piece.append(header);
      }
      if (piece.length() + row.length() <= max) {
        piece.append(row);
      } else {
        // A row longer than a piece can hold after the header: its text, cut as prose.
        out.addAll(textPieces(row, max));
      }
    }
    if (piece.length() > header.length()) {
      out.add(piece.toString().stripTrailing());
    }
    out.removeIf(String::isBlank);
    if (out.stream().noneMatch(p -> p.startsWith(header))) {
      // Every row was too long to go under it: the header still goes first, on its own.
      out.add(0, header.strip());
    }
    return out;
  }

  private static List<String> textPieces(String text, int max) {
    List<String> out = new ArrayList<>();
    int start = 0;
    while (text.length() - start > max) {
      int limit = start + max;
      int cut = text.lastIndexOf('\n', limit);
      if (cut <= start + max / 2) {
        cut = lastSpace(text, start + max / 2, limit);
      }
      int next;
      if (cut > start + max / 2) {
        next = cut + 1; // the line break or space itself is dropped
      } else {
        cut = limit;
        if (Character.isHighSurrogate(text.charAt(cut - 1)) && Character.isLowSurrogate(text.charAt(cut))) {
          cut--;
        }
        next = cut;
      }
      String piece = text.substring(start, cut).strip();
      if (!piece.isEmpty()) {
        out.add(piece);
      }
      start = next;
    }
    String rest = text.substring(start).strip();
    if (!rest.isEmpty()) {
      out.add(rest);
    }
    return out;
  }

  /** The index of the last space or tab in {@code [from, to]}, or -1. */
  private static int lastSpace(String text, int from, int to) {
    for (int i = Math.min(to, text.length() - 1); i >= from; i--) {
      char c = text.charAt(i);
      if (c == ' ' || c == '\t') {
        return i;
      }
    }
    return -1;
  }
}
