package dev.quarry.ingest;

import dev.quarry.store.DocItem;

import dev.quarry.ingest.IngestException.Reason;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The one rule every converter's items go through before anything is stored: text that could not
 * be decoded is never stored as if it were text, and a source that yields no text is refused.
 *
 * <p>Undecodable means: control characters other than tab and newline (C0, DEL, C1; line-ending
 * and page-break controls become newlines first), U+FFFD (a decoder's "something was here"),
 * private-use code points (what a font without a Unicode mapping leaves behind), noncharacters and
 * lone surrogates. They are dropped and counted; the count is reported in the ingest result
 * ({@code undecodable_chars}, and by page in {@code undecodable_pages}). An item whose text was nothing but such characters is dropped
 * whole. Then, when no item is left with a letter or digit (pictures' descriptions included), the
 * source is refused: {@link Reason#EMPTY} when the converter found nothing at all (no text, table
 * or picture: a genuinely empty document), {@link Reason#NO_TEXT_EXTRACTED} otherwise (pictures
 * only, tables of empty cells, text that was all undecodable).
 */
public final class TextHygiene {
  private static final Pattern LINE_BREAKS = Pattern.compile("\r\n|[\r\u000B\f\u0085\u2028\u2029]");
  private static final Pattern SPACE_RUNS = Pattern.compile("[ \t]{2,}");
  private static final Pattern HAS_TEXT = Pattern.compile("[\\p{L}\\p{N}]");

  private TextHygiene() {}

  /**
   * A converted document cleaned by the rule, with how many characters were dropped: here and by
   * the converter (glyphs without a mapping), in all and by 1-based page (for sources with pages;
   * a dropped character counts on its item's first page).
   */
  public record Result(ConvertedDocument document, int undecodableChars, int droppedItems,
      Map<Integer, Integer> undecodableByPage) {}

  /** Whether {@code cp} is a code point that stands for no readable text. */
  public static boolean undecodable(int cp) {
    if (cp == '\t' || cp == '\n') {
      return false;
    }
    return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)
        || cp == 0xFFFD
        || (cp >= 0xE000 && cp <= 0xF8FF) || cp >= 0xF0000
        || (cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE
        || (cp >= 0xD800 && cp <= 0xDFFF);
  }

  /** {@code text} without its undecodable characters. */
  public static String clean(String text) {
    return cleanCounting(text, new int[1]);
  }

  private static String cleanCounting(String text, int[] dropped) {
    String t = LINE_BREAKS.matcher(text).replaceAll("\n");
    StringBuilder out = null;
    for (int i = 0; i < t.length(); ) {
      int cp = t.codePointAt(i);
      int n = Character.charCount(cp);
      if (undecodable(cp)) {
        if (out == null) {
          out = new StringBuilder(t.length()).append(t, 0, i);
        }
        dropped[0]++;
      } else if (out != null) {
        out.appendCodePoint(cp);
      }
      i += n;
    }
    if (out == null) {
      return t;
    }
    // What was dropped often sat between spaces; do not leave a gap of two where it was.
    return SPACE_RUNS.matcher(out).replaceAll(" ").strip();
  }

  /** Whether {@code text} holds a letter or a digit. */
  public static boolean hasText(String text) {
    return HAS_TEXT.matcher(text).find();
  }

  /**
   * Applies the rule to a converted document: cleans every item (positions renumbered when items
   * are dropped), then refuses a document without text.
   */
  public static Result apply(String fileName, ConvertedDocument doc) throws IngestException {
    List<DocItem> out = new ArrayList<>(doc.items().size());
    Map<Integer, Integer> byPage = new TreeMap<>(doc.undecodableByPage());
    int[] dropped = {byPage.values().stream().mapToInt(Integer::intValue).sum()};
    int droppedItems = 0;
    boolean anyText = false;
    int pictures = 0;
    int tables = 0;
    for (DocItem it : doc.items()) {
      int before = dropped[0];
      String text = cleanCounting(it.text(), dropped);
      if (dropped[0] > before && !it.pageNumbers().isEmpty()) {
        byPage.merge(it.pageNumbers().get(0), dropped[0] - before, Integer::sum);
      }
      boolean lostAll = dropped[0] > before && text.isBlank() && !it.text().isBlank();
      if (lostAll && !it.label().equals("picture") && !it.label().equals("table")) {
        droppedItems++;
        continue;
      }
      anyText |= hasText(text);
      pictures += it.label().equals("picture") ? 1 : 0;
      tables += it.label().equals("table") ? 1 : 0;
      out.add(new DocItem(out.size(), it.selfRef().replace("\0", ""), it.label(), text, it.pageNumbers(),
          it.headingLevel(), it.treeDepth()));
    }
    if (!anyText) {
      if (doc.items().isEmpty()) {
        throw new IngestException(Reason.EMPTY, fileName,
            "has no content: no text, table or picture was found in it");
      }
      throw new IngestException(Reason.NO_TEXT_EXTRACTED, fileName, "yields no text: found "
          + pictures + " picture(s), " + tables + " table(s) and " + doc.items().size()
          + " item(s) in all, with no letter or digit"
          + (dropped[0] > 0 ? " once " + dropped[0] + " undecodable character(s) were dropped"
              + " (no Unicode mapping, control characters)" : "")
          + "; Quarry does not read text out of images (no OCR)");
    }
    String title = cleanCounting(doc.title(), new int[1]);
    return new Result(new ConvertedDocument(title.isBlank() ? fileName : title, doc.sourceType(), out,
        doc.undecodableByPage()), dropped[0], droppedItems, byPage);
  }
}
