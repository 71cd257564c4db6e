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

  /**
   * What identifies a chunk's document, for retrieval (the {@code context} column): the document's
   * title and, when it says something the title does not, its file name with the separators as
   * spaces ({@code ADOBE_2022_10K.pdf} becomes {@code ADOBE 2022 10K}), which for a filing names
   * the company, the period and the form.
   */
  public static String context(String title, String uri) {
    String t = title == null ? "" : title.strip();
    String name = uri == null ? "" : uri.strip();
    name = name.substring(Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\')) + 1);
    int dot = name.lastIndexOf('.');
    if (dot > 0) {
      name = name.substring(0, dot);
    }
    name = name.replaceAll("[_\\-.+%]+", " ").strip();
    if (name.isEmpty() || t.toLowerCase(java.util.Locale.ROOT).contains(name.toLowerCase(java.util.Locale.ROOT))) {
      return t;
    }
    return t.isEmpty() || name.toLowerCase(java.util.Locale.ROOT).contains(t.toLowerCase(java.util.Locale.ROOT))
        ? name : t + " | " + name;
  }

  /** The text the model embeds for a chunk: its document's context, then its own content. */
  public static String embeddedText(String context, String content) {
    return context == null || context.isBlank() ? content : context + "\n\n" + content;
  }

  public Chunk {
    headings = List.copyOf(headings);
    pageNumbers = List.copyOf(pageNumbers);
    docItemRefs = List.copyOf(docItemRefs);
    labels = List.copyOf(labels);
  }
}
