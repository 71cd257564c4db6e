package dev.quarry.ingest;

import dev.quarry.store.DocItem;

import java.util.ArrayList;
import java.util.List;

/**
 * Plain text: one {@code text} item per paragraph (paragraphs are separated by blank lines). Plain
 * text has no headings, so the document has no sections and a flat, empty table of contents.
 */
public final class TextConverter implements Converter {
  /** A first line longer than this reads like a sentence, not a title. */
  static final int MAX_TITLE_CHARS = 120;

  @Override
  public ConvertedDocument convert(String fileName, byte[] bytes, IngestBudget budget)
      throws IngestException {
    String text = StrictUtf8.decode(fileName, bytes).replace("\r\n", "\n").replace('\r', '\n');
    List<DocItem> items = new ArrayList<>();
    for (String paragraph : text.split("\n[ \t\f\u000B]*\n")) {
      String p = paragraph.strip();
      if (!p.isEmpty()) {
        budget.item(p);
        items.add(new DocItem(items.size(), "#/texts/" + items.size(), "text", p, List.of(), 0, 0));
      }
    }
    if (items.isEmpty()) {
      throw new IngestException(IngestException.Reason.EMPTY, fileName, "contains only whitespace");
    }
    return new ConvertedDocument(title(fileName, items.get(0).text()), SourceType.TEXT, items);
  }

  private static String title(String fileName, String firstParagraph) {
    String firstLine = firstParagraph.lines().findFirst().orElse("").strip();
    return !firstLine.isEmpty() && firstLine.length() <= MAX_TITLE_CHARS ? firstLine : fileName;
  }
}
