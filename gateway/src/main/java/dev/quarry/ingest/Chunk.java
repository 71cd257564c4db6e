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
   * What a chunk's context and embedded text are made of, as a number: chunks stored under a lower
   * one were given less (0: title and file name only, V10; 1: the filing's identity added, but
   * tables embedded with their figures, and a title of any length in the context) and are brought up to this by {@link Reembedder}, so a
   * tenant's chunks never stay mixed. Raise it whenever {@link #context(String, String,
   * FilingIdentity)} or {@link #embeddedText} changes what it returns.
   */
  public static final int CONTEXT_VERSION = 2;

  /** The first version whose {@link #embeddedText} leaves tables' figures out. */
  public static final int TABLES_WITHOUT_FIGURES = 2;

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

  /**
   * The text the model embeds for a chunk: its document's context, then its own content, whose
   * tables keep their words and lose their figures ({@link #withoutFigures}).
   */
  public static String embeddedText(String context, String content) {
    return textWithContext(context, withoutFigures(content));
  }

  /** What {@link #embeddedText} was before {@link #TABLES_WITHOUT_FIGURES}: figures and all. */
  public static String embeddedTextWithFigures(String context, String content) {
    return textWithContext(context, content);
  }

  private static String textWithContext(String context, String content) {
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

  /** What a figure cell is made of: digits and what surrounds them ("$ (1,234.5)", "12 %", "—"). */
  private static final java.util.regex.Pattern FIGURE_CHARS =
      java.util.regex.Pattern.compile("[\\s$€£¥()\\[\\]\\-—–−.,%\\d]+");
  private static final java.util.regex.Pattern NOT_MEANINGFUL =
      java.util.regex.Pattern.compile("(?i)n/?[am]");

  /**
   * The content with each Markdown table row reduced to its cells that are words: a statement's
   * line items and its periods (the header row is kept whole), without the figures, the empty cells
   * and the rule under the header.
   * A row of figures in Markdown is mostly digits and pipes, and a figure splits into several word
   * pieces ("$ 16,388": five); the model reads at most 512, so a long statement's lower line items
   * could be cut off behind its figures. What a statement is about is its line items ("Operating income",
   * "Total current liabilities"); its figures say nothing the model can match a question with (BM25
   * still indexes them: it indexes the content, not this). Lines that are not table rows, and text
   * tables' cells, are unchanged.
   */
  static String withoutFigures(String content) {
    if (content.indexOf('|') < 0) {
      return content;
    }
    StringBuilder out = new StringBuilder(content.length());
    String[] lines = content.split("\n", -1);
    for (int i = 0; i < lines.length; i++) {
      String line = lines[i];
      String t = line.strip();
      if (t.length() < 2 || t.charAt(0) != '|' || t.charAt(t.length() - 1) != '|') {
        out.append(line).append('\n');
        continue;
      }
      if (TableGrid.isRule(t, 1, true)) {
        continue;
      }
      // The header row (the one above the rule) keeps its years: they are the periods.
      boolean header = i + 1 < lines.length && TableGrid.isRule(lines[i + 1].strip(), 1, true);
      StringBuilder row = new StringBuilder();
      for (String cell : t.substring(1, t.length() - 1).split("\\|", -1)) {
        String c = cell.strip();
        if (c.isEmpty() || !header && (FIGURE_CHARS.matcher(c).matches() || NOT_MEANINGFUL.matcher(c).matches())) {
          continue;
        }
        row.append(row.isEmpty() ? "" : " | ").append(c);
      }
      if (!row.isEmpty()) {
        out.append(row).append('\n');
      }
    }
    return out.substring(0, Math.max(0, out.length() - 1));
  }

  public Chunk {
    headings = List.copyOf(headings);
    pageNumbers = List.copyOf(pageNumbers);
    docItemRefs = List.copyOf(docItemRefs);
    labels = List.copyOf(labels);
  }
}
