package dev.quarry.ingest;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.jsoup.Jsoup;
import org.jsoup.nodes.Document;
import org.jsoup.nodes.Element;
import org.jsoup.nodes.Node;
import org.jsoup.nodes.TextNode;

/**
 * HTML to items, following docling's HTML backend: {@code h1} is a {@code title}, {@code h2}…{@code
 * h6} are section headers of level 1…5, lists nest two levels per list (list group, then item),
 * tables repeat a spanning cell in every slot it covers, and text that sits loose between blocks
 * becomes a text item of its own. Navigation and asides are kept: a menu or a sidebar is text the
 * page shows (a documentation site's sidebar is its table of contents), and docling keeps it too.
 * Scripts, styles, form controls (buttons such as "Toggle …", inputs, a search form) and what is
 * hidden from screen readers ({@code aria-hidden}) are not content: they say what a reader can
 * click, or repeat what the page says elsewhere.
 */
public final class HtmlConverter implements Converter {
  /** Elements whose content is never document text. */
  private static final Set<String> SKIPPED = Set.of(
      "head", "script", "style", "noscript", "template", "svg", "math", "iframe", "object",
      "button", "select", "input", "textarea", "form");
  /** Elements that end the running paragraph; everything else is inline. */
  private static final Set<String> BLOCKS = Set.of(
      "address", "article", "aside", "blockquote", "body", "center", "dd", "details", "dialog",
      "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "h1", "h2", "h3", "h4", "h5",
      "h6", "header", "hgroup", "hr", "li", "main", "menu", "ol", "p", "pre", "section", "summary",
      "table", "ul", "caption", "img", "picture", "video", "audio");
  /** Browsers cap colspan at 1000 too; a bigger span is taken as this. */
  private static final int MAX_SPAN = 1000;

  @Override
  public ConvertedDocument convert(String fileName, byte[] bytes, IngestBudget budget)
      throws IngestException {
    String html = StrictUtf8.decode(fileName, bytes);
    chargeTree(html, budget);
    Document doc = Jsoup.parse(html);
    Walk walk = new Walk(new ItemListBuilder(budget));
    // The head's <title> is the document's first item, as in docling, unless the first heading says it.
    String headTitle = clean(doc.title());
    Element h1 = doc.body().selectFirst("h1");
    if (!headTitle.isEmpty() && (h1 == null || !clean(h1.text()).equals(headTitle))) {
      walk.out.text("title", headTitle, 0, 0);
    }
    walk.container(doc.body(), 0);
    walk.flush(0);
    return new ConvertedDocument(title(doc, walk.out, fileName), SourceType.HTML, walk.out.items());
  }

  /** What jsoup's tree of a tag costs, measured: 30-105 bytes, 420 with 26 attributes. */
  static final int TAG_BYTES = 110;
  /** What the tree costs per character besides its tags: the text, attribute values, the source. */
  static final int TREE_BYTES_PER_CHAR = 8;

  /**
   * Charges the tree jsoup will build of {@code html} before it is parsed: about {@link #TAG_BYTES}
   * a tag and {@link #TREE_BYTES_PER_CHAR} a character (jsoup's tree held 8 to 35 bytes per byte of
   * source in the shapes measured, tags of formatting elements nested the most).
   */
  private static void chargeTree(String html, IngestBudget budget) {
    long tags = 0;
    for (int i = 0; i < html.length(); i++) {
      if (html.charAt(i) == '<') {
        tags++;
      }
    }
    budget.memory(TAG_BYTES * tags + (long) TREE_BYTES_PER_CHAR * html.length(), "the HTML's element tree");
  }

  private static String title(Document doc, ItemListBuilder items, String fileName) {
    String title = doc.title().strip();
    return title.isEmpty() ? items.title(fileName) : title;
  }

  /**
   * Converts a fragment of HTML (a block embedded in Markdown) into {@code out}, its items nested
   * {@code depth} deep: the same rules as a whole page.
   */
  static void fragment(String html, int depth, ItemListBuilder out) {
    chargeTree(html, out.budget());
    Walk walk = new Walk(out);
    walk.container(Jsoup.parseBodyFragment(html).body(), depth);
    walk.flush(depth);
  }

  /** One pass over the DOM; inline text accumulates until a block ends it. */
  private static final class Walk {
    final ItemListBuilder out;

    Walk(ItemListBuilder out) {
      this.out = out;
    }

    private final StringBuilder running = new StringBuilder();
    /** The label the next flushed text gets: "list_item" for the first text of an {@code li}. */
    private String pendingLabel = null;

    /** How many elements deep the walk is: it recurses once a level. */
    private int level;

    void container(Element element, int depth) {
      out.budget().nesting(++level, "HTML elements in elements");
      for (Node child : element.childNodes()) {
        node(child, depth);
      }
      level--;
    }

    private void node(Node node, int depth) {
      if (node instanceof TextNode text) {
        running.append(text.getWholeText());
        return;
      }
      if (!(node instanceof Element e)) {
        return;
      }
      String tag = e.normalName();
      // Hidden, or hidden from screen readers (aria-hidden: an icon's label, a control's copy).
      if (SKIPPED.contains(tag) || e.hasAttr("hidden") || e.attr("aria-hidden").equals("true")) {
        return;
      }
      if (tag.equals("br")) {
        running.append(' ');
        return;
      }
      if (!BLOCKS.contains(tag)) {
        // Inline: its text runs on in the current paragraph, whitespace as the source has it.
        container(e, depth);
        return;
      }
      flush(depth);
      switch (tag) {
        case "h1" -> out.text("title", clean(e.text()), 0, depth);
        case "h2", "h3", "h4", "h5", "h6" ->
            out.text("section_header", clean(e.text()), tag.charAt(1) - '1', depth);
        case "p" -> {
          container(e, depth);
          flush(depth);
        }
        case "ul", "ol", "menu" -> list(e, depth + 1);
        case "li", "dt" -> listItem(e, depth + 1);
        case "dd" -> listItem(e, depth + 2);
        case "dl" -> descriptionList(e, depth + 1);
        case "table" -> table(e, depth);
        case "figure" -> figure(e, depth);
        case "img" -> picture(e.attr("alt"), depth);
        case "figcaption", "caption" -> {
          String text = clean(e.text());
          if (!text.isEmpty()) {
            out.text("caption", text, 0, depth);
          }
        }
        case "pre" -> {
          String code = e.wholeText().stripTrailing();
          if (!code.isBlank()) {
            out.text("code", stripLeadingNewline(code), 0, depth);
          }
        }
        case "blockquote" -> {
          container(e, depth + 1);
          flush(depth + 1);
        }
        default -> {
          container(e, depth);
          flush(depth);
        }
      }
    }

    private void list(Element list, int depth) {
      for (Node child : list.childNodes()) {
        if (child instanceof Element li && li.normalName().equals("li")) {
          listItem(li, depth);
        } else {
          node(child, depth);
        }
      }
      flush(depth);
    }

    /**
     * A description list as docling reads it: each term ({@code dt}) a list item of the list, each
     * description ({@code dd}) a list item one level below its term.
     */
    private void descriptionList(Element dl, int depth) {
      for (Node child : dl.childNodes()) {
        if (child instanceof Element e && e.normalName().equals("dt")) {
          listItem(e, depth);
        } else if (child instanceof Element e && e.normalName().equals("dd")) {
          listItem(e, depth + 1);
        } else if (child instanceof Element e && e.normalName().equals("div")) {
          // HTML allows dt/dd groups wrapped in a div.
          descriptionList(e, depth);
        } else {
          node(child, depth);
        }
      }
      flush(depth);
    }

    /**
     * The item's own text (up to its first nested block) is the list item; nested lists and
     * further blocks sit below it. An item that starts with a block still gets its (empty) item so
     * that the nesting stays visible.
     */
    private void listItem(Element li, int depth) {
      flush(depth);
      pendingLabel = "list_item";
      int before = out.items().size();
      for (Node child : li.childNodes()) {
        if (pendingLabel != null && child instanceof Element e && BLOCKS.contains(e.normalName())
            && !e.normalName().equals("p")) {
          flushListItem(depth);
        }
        node(child, pendingLabel != null ? depth : depth + 1);
      }
      if (pendingLabel != null) {
        flushListItem(depth);
      } else {
        flush(depth + 1);
      }
      if (out.items().size() == before) {
        out.text("list_item", "", 0, depth);
      }
    }

    private void flushListItem(int depth) {
      String text = clean(running.toString());
      running.setLength(0);
      pendingLabel = null;
      out.text("list_item", text, 0, depth);
    }

    /** Emits the running paragraph, if any. */
    void flush(int depth) {
      String text = clean(running.toString());
      running.setLength(0);
      if (text.isEmpty()) {
        return;
      }
      String label = pendingLabel != null ? pendingLabel : "text";
      pendingLabel = null;
      out.text(label, text, 0, depth);
    }

    private void figure(Element figure, int depth) {
      String caption = "";
      Element figcaption = figure.selectFirst("figcaption");
      if (figcaption != null) {
        caption = clean(figcaption.text());
      }
      List<Element> images = figure.select("img");
      if (images.isEmpty()) {
        picture(caption, depth);
      }
      for (Element img : images) {
        picture(caption.isEmpty() ? img.attr("alt") : caption, depth);
      }
      // Whatever else the figure holds (a table, a quote…) is content too.
      for (Element child : figure.children()) {
        if (child != figcaption && child.selectFirst("img") == null && !child.normalName().equals("img")) {
          node(child, depth + 1);
        }
      }
      flush(depth + 1);
    }

    /** A picture item carries its caption; the caption is also an item, as in docling. */
    private void picture(String caption, int depth) {
      String text = clean(caption);
      out.picture(text, depth);
      if (!text.isEmpty()) {
        out.text("caption", text, 0, depth + 1);
      }
    }

    private void table(Element table, int depth) {
      String markdown = grid(table, out.budget());
      if (!markdown.isEmpty()) {
        out.table(markdown, depth);
      }
      Element caption = table.selectFirst("caption");
      if (caption != null && !clean(caption.text()).isEmpty()) {
        out.text("caption", clean(caption.text()), 0, depth + 1);
      }
    }
  }

  /**
   * The table's own rows (not those of tables nested in its cells) laid out on a grid, with a cell
   * that spans rows or columns repeated in each slot it covers, as docling's grid does, as Markdown.
   * A row all of whose cells go on into the next row (a header cell that only opens a rowspan, an
   * empty {@code <tr>}) adds no line of its own: its cells are in the rows below. Nor does a row no
   * cell reaches at all.
   */
  static String grid(Element table, IngestBudget budget) {
    List<Element> rows = new ArrayList<>();
    for (Element child : table.children()) {
      String tag = child.normalName();
      if (tag.equals("tr")) {
        rows.add(child);
      } else if (tag.equals("thead") || tag.equals("tbody") || tag.equals("tfoot")) {
        for (Element tr : child.children()) {
          if (tr.normalName().equals("tr")) {
            rows.add(tr);
          }
        }
      }
    }
    TableGrid grid = new TableGrid(budget);
    // Per row: whether a cell was laid in it, and whether a cell laid in it ends there.
    boolean[] reached = new boolean[rows.size()];
    boolean[] endsHere = new boolean[rows.size()];
    for (int r = 0; r < rows.size(); r++) {
      grid.ensure(r + 1L, 0);
      int c = 0;
      for (Element cell : rows.get(r).children()) {
        if (!cell.normalName().equals("td") && !cell.normalName().equals("th")) {
          continue;
        }
        while (grid.get(r, c) != null) {
          c++;
        }
        int colspan = span(cell.attr("colspan"));
        // rowspan="0" spans to the end of the table (of its row group, in HTML; tables rarely have two).
        int rowspan = cell.attr("rowspan").strip().equals("0") ? rows.size() - r : span(cell.attr("rowspan"));
        int lastRow = Math.min(rows.size() - 1, r + rowspan - 1);
        String text = clean(cell.text());
        // The whole span is checked against the table's limit before any slot of it is written.
        grid.ensure(lastRow + 1L, (long) c + colspan);
        for (int dr = r; dr <= lastRow; dr++) {
          for (int dc = 0; dc < colspan; dc++) {
            if (grid.setIfAbsent(dr, c + dc, text)) {
              reached[dr] = true;
              endsHere[dr] |= dr == lastRow;
            }
          }
        }
        c += colspan;
      }
    }
    int last = rows.size() - 1;
    return grid.markdown(r -> reached[r] && (r == last || endsHere[r]));
  }

  private static int span(String value) {
    try {
      int n = Integer.parseInt(value.strip());
      return Math.clamp(n, 1, MAX_SPAN);
    } catch (NumberFormatException e) {
      return 1;
    }
  }

  private static String clean(String s) {
    return s.replace('\u00a0', ' ').replaceAll("\\s+", " ").strip();
  }

  private static String stripLeadingNewline(String s) {
    return s.startsWith("\n") ? s.substring(1) : s;
  }
}
