package dev.quarry.ingest;

import java.text.Bidi;
import java.text.Normalizer;

/**
 * Text-level rules of PDF conversion: which glyph texts are real characters, how a line written
 * in visual order (right-to-left scripts) is put back in logical order, and where joining two
 * lines needs no space (Chinese and Japanese).
 */
final class PdfText {
  private PdfText() {}

  /**
   * The glyph's text as stored, or null when the font maps the glyph to no real character:
   * control characters, private-use or unassigned code points, the replacement character. Such
   * a glyph is dropped and counted, never stored as text. Presentation forms (Arabic letter
   * shapes, Latin ligatures such as "ﬁ") become the letters they show, so that search finds them.
   */
  static String decoded(String unicode) {
    boolean presentation = false;
    for (int i = 0; i < unicode.length(); ) {
      int cp = unicode.codePointAt(i);
      i += Character.charCount(cp);
      int type = Character.getType(cp);
      if (cp == 0xFFFD || type == Character.CONTROL || type == Character.PRIVATE_USE
          || type == Character.UNASSIGNED || type == Character.SURROGATE) {
        return null;
      }
      presentation |= cp >= 0xFB00 && cp <= 0xFDFF || cp >= 0xFE70 && cp <= 0xFEFF;
    }
    return presentation ? Normalizer.normalize(unicode, Normalizer.Form.NFKC) : unicode;
  }

  /** Whether the text holds a right-to-left letter (Hebrew, Arabic, Syriac, Thaana, N'Ko…). */
  static boolean hasRightToLeft(CharSequence text) {
    for (int i = 0; i < text.length(); i++) {
      byte d = Character.getDirectionality(text.charAt(i));
      if (d == Character.DIRECTIONALITY_RIGHT_TO_LEFT
          || d == Character.DIRECTIONALITY_RIGHT_TO_LEFT_ARABIC) {
        return true;
      }
    }
    return false;
  }

  /** 1 for text led by a left-to-right letter, -1 for a right-to-left one, 0 for neither. */
  static int strongDirection(String text) {
    for (int i = 0; i < text.length(); i++) {
      byte d = Character.getDirectionality(text.charAt(i));
      if (d == Character.DIRECTIONALITY_LEFT_TO_RIGHT) {
        return 1;
      }
      if (d == Character.DIRECTIONALITY_RIGHT_TO_LEFT
          || d == Character.DIRECTIONALITY_RIGHT_TO_LEFT_ARABIC) {
        return -1;
      }
    }
    return 0;
  }

  /** Whether the glyph's text is only combining marks (it sits on the letter before it). */
  static boolean isMark(String text) {
    for (int i = 0; i < text.length(); i++) {
      int type = Character.getType(text.charAt(i));
      if (type != Character.NON_SPACING_MARK && type != Character.ENCLOSING_MARK) {
        return false;
      }
    }
    return !text.isEmpty();
  }

  /** Whether right-to-left letters outnumber left-to-right ones: the line's base direction. */
  static boolean rightToLeftBase(CharSequence text) {
    int rtl = 0;
    int ltr = 0;
    for (int i = 0; i < text.length(); i++) {
      byte d = Character.getDirectionality(text.charAt(i));
      if (d == Character.DIRECTIONALITY_RIGHT_TO_LEFT
          || d == Character.DIRECTIONALITY_RIGHT_TO_LEFT_ARABIC) {
        rtl++;
      } else if (d == Character.DIRECTIONALITY_LEFT_TO_RIGHT) {
        ltr++;
      }
    }
    return rtl > ltr;
  }

  /**
   * The logical order of a line given in visual order (left to right as drawn): index {@code k}
   * of the result is the visual index of the k-th character read. PDFs draw right-to-left text
   * in visual order, so PDFBox's glyphs come that way. The Unicode bidirectional algorithm
   * ({@link Bidi}) finds the runs: on a right-to-left base the whole line is reversed and the
   * left-to-right runs inside it (Latin words, numbers) turned back; on a left-to-right base only
   * the right-to-left runs are reversed. Exact for the two levels real text has.
   */
  static int[] visualToLogical(String visual, boolean rtlBase) {
    int n = visual.length();
    int[] order = new int[n];
    StringBuilder t = new StringBuilder(n);
    for (int k = 0; k < n; k++) {
      order[k] = rtlBase ? n - 1 - k : k;
      t.append(visual.charAt(order[k]));
    }
    Bidi bidi = new Bidi(t.toString(),
        rtlBase ? Bidi.DIRECTION_RIGHT_TO_LEFT : Bidi.DIRECTION_LEFT_TO_RIGHT);
    int reversedParity = rtlBase ? 0 : 1;
    for (int r = 0; r < bidi.getRunCount(); r++) {
      if (bidi.getRunLevel(r) % 2 == reversedParity) {
        reverse(order, bidi.getRunStart(r), bidi.getRunLimit(r));
      }
    }
    return order;
  }

  private static void reverse(int[] a, int from, int to) {
    for (int i = from, j = to - 1; i < j; i++, j--) {
      int x = a[i];
      a[i] = a[j];
      a[j] = x;
    }
  }

  /**
   * Whether two lines join without a space: Chinese and Japanese are written without spaces
   * between words, so a line break inside them is no word break. Korean is written with spaces
   * and a line may break at one, so Hangul lines join with a space, as docling joins them.
   */
  static boolean joinsWithoutSpace(int before, int after) {
    return unspaced(before) && unspaced(after);
  }

  private static boolean unspaced(int cp) {
    Character.UnicodeScript s = Character.UnicodeScript.of(cp);
    if (s == Character.UnicodeScript.HAN || s == Character.UnicodeScript.HIRAGANA
        || s == Character.UnicodeScript.KATAKANA) {
      return true;
    }
    Character.UnicodeBlock b = Character.UnicodeBlock.of(cp);
    return b == Character.UnicodeBlock.CJK_SYMBOLS_AND_PUNCTUATION
        || b == Character.UnicodeBlock.HALFWIDTH_AND_FULLWIDTH_FORMS;
  }
}
