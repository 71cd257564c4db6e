package dev.quarry.ingest;

import java.util.List;

/**
 * A retrieval unit: a contiguous item range inside one section, or one piece of a single item that
 * is too long to embed whole (then several chunks share the same range).
 *
 * @param itemStart first item position
 * @param itemEnd one past the last item position
 * @param headings the section path, outermost first
 * @param content what is embedded and indexed: the heading path, then the items' text
 * @param docItemRefs the {@code self_ref}s of the items whose text is in the chunk
 * @param labels the distinct labels of those items, in order of appearance
 */
public record Chunk(
    int ordinal,
    int itemStart,
    int itemEnd,
    List<String> headings,
    String content,
    List<Integer> pageNumbers,
    List<String> docItemRefs,
    List<String> labels) {

  public Chunk {
    headings = List.copyOf(headings);
    pageNumbers = List.copyOf(pageNumbers);
    docItemRefs = List.copyOf(docItemRefs);
    labels = List.copyOf(labels);
  }
}
