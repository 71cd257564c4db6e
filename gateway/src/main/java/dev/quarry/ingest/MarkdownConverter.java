package dev.quarry.ingest;

import static org.jsoup.parser.Parser.unescapeEntities;

import java.util.ArrayList;
import java.util.List;
import org.commonmark.ext.gfm.tables.TableBlock;
import org.commonmark.ext.gfm.tables.TableCell;
import org.commonmark.ext.gfm.tables.TableRow;
import org.commonmark.ext.gfm.tables.TablesExtension;
import org.commonmark.node.BlockQuote;
import org.commonmark.node.Code;
import org.commonmark.node.FencedCodeBlock;
import org.commonmark.node.HardLineBreak;
import org.commonmark.node.Heading;
import org.commonmark.node.HtmlBlock;
import org.commonmark.node.HtmlInline;
import org.commonmark.node.Image;
import org.commonmark.node.IndentedCodeBlock;
import org.commonmark.node.ListBlock;
import org.commonmark.node.ListItem;
import org.commonmark.node.Node;
import org.commonmark.node.Paragraph;
import org.commonmark.node.SoftLineBreak;
import org.commonmark.node.Text;
import org.commonmark.parser.Parser;

/**
 * CommonMark + GFM tables to items, following docling's Markdown backend: a level-1 heading is the
 * document {@code title} and level n ≥ 2 is a {@code section_header} of level n − 1; entities and
 * escapes are resolved; a paragraph that is only inline code is a {@code code} item; an HTML block
 * is converted by {@link HtmlConverter}'s rules (tables, lists, headings, paragraphs, code).
 */
public final class MarkdownConverter implements Converter {
  private static final Parser PARSER =
      Parser.builder().extensions(List.of(TablesExtension.create()))
          .customInlineContentParserFactory(new MarkdownAngles()).build();

  @Override
  public ConvertedDocument convert(String fileName, byte[] bytes, IngestBudget budget)
      throws IngestException {
    String source = StrictUtf8.decode(fileName, bytes);
    MarkdownBounds.check(source, budget);
    ItemListBuilder out = new ItemListBuilder(budget);
    try {
      blocks(PARSER.parse(source), 0, out);
    } catch (StackOverflowError e) {
      // The parser recurses over nested markup; a hostile input can nest deeper than any stack.
      throw new IngestException(IngestException.Reason.MALFORMED, fileName,
          "is nested deeper than the Markdown parser can follow (inline markup in inline markup; the limit"
          + " is " + IngestBudget.MAX_NESTING + " levels)");
    }
    return new ConvertedDocument(out.title(fileName), SourceType.MARKDOWN, out.items());
  }

  private static void blocks(Node parent, int depth, ItemListBuilder out) {
    for (Node n = parent.getFirstChild(); n != null; n = n.getNext()) {
      block(n, depth, out);
    }
  }

  private static void block(Node node, int depth, ItemListBuilder out) {
    // Every level of quotes and lists adds to depth: it bounds the recursion too.
    out.budget().nesting(depth, "Markdown quotes and lists in each other");
    switch (node) {
      case Heading h -> {
        String text = inlineText(h, out.budget());
        if (h.getLevel() == 1) {
          out.text("title", text, 0, depth);
        } else {
          out.text("section_header", text, Math.min(h.getLevel() - 1, 6), depth);
        }
      }
      case Paragraph p -> paragraph(p, "text", depth, out);
      // Docling nests a list's items in a list group, and a sub-list in the item: two levels a time.
      case ListBlock list -> {
        for (Node item = list.getFirstChild(); item != null; item = item.getNext()) {
          listItem(item, depth + 1, out);
        }
      }
      case FencedCodeBlock code -> out.text("code", codeText(code.getLiteral()), 0, depth);
      case IndentedCodeBlock code -> out.text("code", codeText(code.getLiteral()), 0, depth);
      case BlockQuote quote -> blocks(quote, depth + 1, out);
      case TableBlock table -> out.table(table(table, out.budget()), depth);
      // Raw HTML (a <table>, a list, headings…) reads as it would in an HTML file.
      case HtmlBlock html -> HtmlConverter.fragment(html.getLiteral(), depth, out);
      default -> {
        // Thematic breaks and link reference definitions carry no content.
      }
    }
  }

  /** An item's first paragraph is the list item's text; whatever follows nests below it. */
  private static void listItem(Node item, int depth, ItemListBuilder out) {
    Node first = item.getFirstChild();
    if (!(item instanceof ListItem) || !(first instanceof Paragraph p)) {
      out.text("list_item", "", 0, depth);
      blocks(item, depth + 1, out);
      return;
    }
    paragraph(p, "list_item", depth, out);
    for (Node n = first.getNext(); n != null; n = n.getNext()) {
      block(n, depth + 1, out);
    }
  }

  /** Pictures come out as their own items after the paragraph's text. */
  private static void paragraph(Paragraph p, String label, int depth, ItemListBuilder out) {
    List<Image> images = new ArrayList<>();
    collectImages(p, images, 0, out.budget());
    String text = inlineText(p, out.budget());
    if (!text.isEmpty() || label.equals("list_item")) {
      boolean onlyCode = p.getFirstChild() instanceof Code && p.getFirstChild().getNext() == null;
      out.text(onlyCode && label.equals("text") ? "code" : label, text, 0, depth);
    }
    for (Image image : images) {
      out.picture(inlineText(image, out.budget()), depth);
    }
  }

  private static void collectImages(Node node, List<Image> images, int level, IngestBudget budget) {
    budget.nesting(level, "inline markup in inline markup");
    for (Node n = node.getFirstChild(); n != null; n = n.getNext()) {
      if (n instanceof Image image) {
        images.add(image);
      } else {
        collectImages(n, images, level + 1, budget);
      }
    }
  }

  /** A GFM table's rows (header first) as Markdown, laid out on the conversion's budget. */
  private static String table(TableBlock table, IngestBudget budget) {
    TableGrid grid = new TableGrid(budget);
    collectRows(table, grid, budget);
    return grid.markdown();
  }

  private static void collectRows(Node node, TableGrid grid, IngestBudget budget) {
    for (Node n = node.getFirstChild(); n != null; n = n.getNext()) {
      if (n instanceof TableRow row) {
        int r = grid.addRow();
        for (Node c = row.getFirstChild(); c != null; c = c.getNext()) {
          if (c instanceof TableCell cell) {
            grid.append(r, inlineText(cell, budget), 1);
          }
        }
      } else {
        collectRows(n, grid, budget);
      }
    }
  }

  /** The visible text of inline content: entities resolved, markup and raw HTML tags dropped. */
  static String inlineText(Node node, IngestBudget budget) {
    StringBuilder sb = new StringBuilder();
    appendInline(node, sb, 0, budget);
    return sb.toString().replaceAll("\\s+", " ").strip();
  }

  private static void appendInline(Node node, StringBuilder sb, int level, IngestBudget budget) {
    budget.nesting(level, "inline markup in inline markup");
    for (Node n = node.getFirstChild(); n != null; n = n.getNext()) {
      switch (n) {
        case Text t -> sb.append(t.getLiteral());
        case Code c -> sb.append(unescapeEntities(c.getLiteral(), false));
        case SoftLineBreak s -> sb.append(' ');
        case HardLineBreak h -> sb.append(' ');
        case HtmlInline h -> {
          // A tag such as <br> or <b> separates or decorates words; it is not content.
          if (h.getLiteral().startsWith("<br")) {
            sb.append(' ');
          }
        }
        case Image i -> {
          // Images become picture items of their own.
        }
        default -> appendInline(n, sb, level + 1, budget);
      }
    }
  }

  /**
   * CommonMark keeps entities in code verbatim; docling resolves them there too, and a reader
   * searching for "&" should find it, so code text is unescaped as well.
   */
  private static String codeText(String literal) {
    String s = literal.endsWith("\n") ? literal.substring(0, literal.length() - 1) : literal;
    return unescapeEntities(s, false).stripTrailing();
  }
}
