package dev.quarry.ingest;

import dev.quarry.store.DocItem;

import java.util.List;

/**
 * What a converter makes of a source: a title and the items in reading order (positions 0..n-1).
 * The section tree, content.txt and chunks are all derived from the items.
 */
public record ConvertedDocument(String title, SourceType sourceType, List<DocItem> items) {
  public ConvertedDocument {
    items = List.copyOf(items);
    for (int i = 0; i < items.size(); i++) {
      if (items.get(i).position() != i) {
        throw new IllegalArgumentException("item positions must be 0..n-1 in order; item " + i
            + " has position " + items.get(i).position());
      }
    }
  }
}
