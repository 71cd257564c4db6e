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

  /**
   * What a chunk's context is made of, as a number: chunks stored under a lower one were given
   * less (0: title and file name only, V10) and are brought up to this by {@link Reembedder}, so a
   * tenant's chunks never stay mixed. Raise it whenever {@link #context(String, String,
   * FilingIdentity)} changes what it returns.
   */
  public static final int CONTEXT_VERSION = 1;

  /**
   * The context of a document's chunks: {@link #context(String, String)}, then what its first
   * pages say of whose filing it is and for when, when they say it and the name does not
   * ({@link FilingIdentity#textBeyond(String)}).
   */
  public static String context(String title, String uri, FilingIdentity identity) {
    String named = context(cut(title, CONTEXT_TITLE_CHARS), uri);
    String who = identity == null ? "" : identity.textBeyond(named);
    String context = who.isEmpty() ? named : named.isEmpty() ? who : named + " | " + who;
    return cut(context, CONTEXT_CHARS);
  }

  /**
   * How much of a title goes into its chunks' context: a real title fits whole, and a chunk's own
   * words keep their place in the model's 512-token window whatever title a document is given.
   */
  static final int CONTEXT_TITLE_CHARS = 300;

  /** The most a chunk's context (title, file name, a filing's identity) takes in all. */
  static final int CONTEXT_CHARS = 600;

  /** The text the model embeds for a chunk: its document's context, then its own content. */
  public static String embeddedText(String context, String content) {
    return context == null || context.isBlank() ? content : context + "\n\n" + content;
  }

  /** {@code text} within {@code max} characters, cut at the last space before it if there is one. */
  public static String cut(String text, int max) {
    if (text == null || text.length() <= max) {
      return text;
    }
    int end = max - 1;
    if (Character.isLowSurrogate(text.charAt(end))) {
      end--;
    }
    int space = text.lastIndexOf(' ', end);
    return (space > max / 2 ? text.substring(0, space) : text.substring(0, end)).strip() + "…";
  }

  public Chunk {
    headings = List.copyOf(headings);
    pageNumbers = List.copyOf(pageNumbers);
    docItemRefs = List.copyOf(docItemRefs);
    labels = List.copyOf(labels);
  }
}
