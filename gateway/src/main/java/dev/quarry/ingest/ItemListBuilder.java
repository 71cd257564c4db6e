package dev.quarry.ingest;

import dev.quarry.store.DocItem;

import java.util.ArrayList;
import java.util.List;

/**
 * Collects the items of a source without pages, numbering positions and docling-style references
 * ({@code #/texts/N}, {@code #/tables/N}, {@code #/pictures/N}) the way docling would. Each item is
 * charged to the conversion's budget as it is added.
 */
final class ItemListBuilder {
  private final List<DocItem> items = new ArrayList<>();
  private final IngestBudget budget;
  private int texts;
  private int tables;
  private int pictures;

  ItemListBuilder(IngestBudget budget) {
    this.budget = budget;
  }

  IngestBudget budget() {
    return budget;
  }

  void text(String label, String text, int headingLevel, int depth) {
    add("#/texts/" + texts++, label, text, headingLevel, depth);
  }

  void table(String markdown, int depth) {
    add("#/tables/" + tables++, "table", markdown, 0, depth);
  }

  void picture(String caption, int depth) {
    add("#/pictures/" + pictures++, "picture", caption, 0, depth);
  }

  private void add(String ref, String label, String text, int headingLevel, int depth) {
    budget.item(text);
    items.add(new DocItem(items.size(), ref, label, text, List.of(), headingLevel, depth));
  }

  List<DocItem> items() {
    return items;
  }

  /** The first title item, else the first header, else the fallback. */
  String title(String fallback) {
    return title(items, fallback);
  }

  /** The first title item's text, else the first section header's, else {@code fallback}. */
  static String title(List<DocItem> items, String fallback) {
    String header = null;
    for (DocItem i : items) {
      if (i.label().equals("title") && !i.text().isBlank()) {
        return i.text();
      }
      if (header == null && i.label().equals("section_header") && !i.text().isBlank()) {
        header = i.text();
      }
    }
    return header != null ? header : fallback;
  }
}
