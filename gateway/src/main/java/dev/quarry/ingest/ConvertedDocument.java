package dev.quarry.ingest;

import dev.quarry.store.DocItem;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a converter makes of a source: a title and the items in reading order (positions 0..n-1).
 * The section tree, content.txt and chunks are all derived from the items.
 * {@code undecodableByPage}: characters the converter itself dropped as undecodable, by 1-based
 * page (a PDF's glyphs whose font maps them to no character); empty for sources without pages.
 */
public record ConvertedDocument(String title, SourceType sourceType, List<DocItem> items,
    Map<Integer, Integer> undecodableByPage) {
  public ConvertedDocument(String title, SourceType sourceType, List<DocItem> items) {
    this(title, sourceType, items, Map.of());
  }

  public ConvertedDocument {
    undecodableByPage = java.util.Collections.unmodifiableMap(new TreeMap<>(undecodableByPage));
    items = List.copyOf(items);
    for (int i = 0; i < items.size(); i++) {
      if (items.get(i).position() != i) {
        throw new IllegalArgumentException("item positions must be 0..n-1 in order; item " + i
            + " has position " + items.get(i).position());
      }
    }
  }
}
