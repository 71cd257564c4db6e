package dev.quarry.ingest;

import static dev.quarry.ingest.DocxXml.MC;
import static dev.quarry.ingest.DocxXml.PIC;
import static dev.quarry.ingest.DocxXml.VML;
import static dev.quarry.ingest.DocxXml.W;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.poi.xwpf.usermodel.XWPFDocument;
import org.apache.poi.xwpf.usermodel.XWPFStyle;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * Walks a WordprocessingML body (its DOM, so nothing POI's model skips is lost) into items in
 * reading order: paragraphs with their runs, hyperlinks, fields, content controls and tracked
 * insertions (not deletions); Office Math as LaTeX (a paragraph of math alone, or {@code
 * m:oMathPara}, is a {@code formula} item; math inside a sentence stays in its text); text boxes
 * (DrawingML {@code wps:txbx}, VML {@code v:textbox}) after the paragraph that anchors them, one
 * branch of each {@code mc:AlternateContent}; tables as Markdown, a table nested in a cell as a
 * table item of its own after its parent, a one-cell table (a layout frame) as its content;
 * code-styled or monospace paragraphs as {@code code} items (consecutive ones joined).
 */
final class DocxBody {
  private static final Pattern HEADING = Pattern.compile("heading\\s*(\\d)");
  private static final Pattern CODE_STYLE =
      Pattern.compile(".*\\b(code|preformatted|source|listing|verbatim|plain text|macro text)\\b.*");
  private static final Pattern MONOSPACE = Pattern.compile(
      "(?i).*(courier|consolas|menlo|monaco|lucida console|mono|source code|fira code|cascadia|inconsolata).*");

  private final XWPFDocument doc;
  private final ItemListBuilder out;
  /** How deep the walk is in blocks, inline wrappers and cells: it recurses once a level. */
  private int level;
  private final StringBuilder code = new StringBuilder();
  private final Map<String, String> styleNames = new HashMap<>();

  DocxBody(XWPFDocument doc, ItemListBuilder out) {
    this.doc = doc;
    this.out = out;
  }

  /** Writes what is still pending (a run of code paragraphs at the end of the body). */
  void finish() {
    flushCode();
  }

  /** Enters one more level of the walk, refused past {@link IngestBudget#MAX_NESTING}. */
  private void enter(String what) {
    out.budget().nesting(++level, what);
  }

  /** Reads block-level content: paragraphs, tables and what wraps them. */
  void blocks(Node container, int depth) {
    enter("DOCX blocks in content controls, text boxes and cells");
    try {
      blocksIn(container, depth);
    } finally {
      level--;
    }
  }

  private void blocksIn(Node container, int depth) {
    for (Element e : DocxXml.elements(container)) {
      String ns = e.getNamespaceURI();
      String name = e.getLocalName();
      if (W.equals(ns)) {
        switch (name) {
          case "p" -> paragraph(e, depth);
          case "tbl" -> table(e, depth);
          case "sdt" -> {
            Element content = DocxXml.child(e, W, "sdtContent");
            if (content != null) {
              blocks(content, depth);
            }
          }
          case "customXml", "ins", "moveTo", "smartTag" -> blocks(e, depth);
          default -> { }
        }
      } else if (MC.equals(ns) && name.equals("AlternateContent")) {
        Element branch = DocxXml.alternative(e);
        if (branch != null) {
          blocks(branch, depth);
        }
      }
    }
  }

  /** What one paragraph's inline content holds, besides its text. */
  private static final class Inline {
    final StringBuilder text = new StringBuilder();
    final List<Element> displayMath = new ArrayList<>();
    final List<Element> textBoxes = new ArrayList<>();
    final List<String> pictures = new ArrayList<>();
    boolean inlineMath;
    boolean monospace = true;
    boolean anyRun;
  }

  private void paragraph(Element p, int depth) {
    Inline in = new Inline();
    inline(p, in);
    String text = in.text.toString().replaceAll("[ \\u00A0]{2,}", " ").strip();
    String style = styleName(DocxXml.child(p, W, "pPr"));
    // A heading, title, caption or list item keeps its role whatever its font.
    boolean structural = HEADING.matcher(style).matches() || style.equals("title") || style.equals("caption")
        || listLevel(DocxXml.child(p, W, "pPr"), style) != null;
    boolean isCode = !text.isEmpty() && in.displayMath.isEmpty() && !in.inlineMath && !structural
        && (CODE_STYLE.matcher(style).matches() || (in.anyRun && in.monospace));
    if (isCode) {
      code.append(code.isEmpty() ? "" : "\n").append(in.text.toString().stripTrailing());
    } else {
      flushCode();
      if (!text.isEmpty()) {
        boolean onlyMath = in.inlineMath && TextHygiene.hasText(text) && mathOnly(p);
        label(p, style, text, onlyMath, depth);
      }
    }
    for (Element math : in.displayMath) {
      flushCode();
      String latex = Omml.latex(math);
      if (!latex.isEmpty()) {
        out.text("formula", latex, 0, depth);
      }
    }
    for (String description : in.pictures) {
      flushCode();
      out.picture(description, depth);
    }
    for (Element box : in.textBoxes) {
      flushCode();
      blocks(box, depth);
    }
  }

  private void flushCode() {
    if (!code.isEmpty()) {
      String c = code.toString().strip();
      if (!c.isEmpty()) {
        out.text("code", c, 0, 0);
      }
      code.setLength(0);
    }
  }

  private void label(Element p, String style, String text, boolean onlyMath, int depth) {
    Matcher heading = HEADING.matcher(style);
    Integer ilvl = listLevel(DocxXml.child(p, W, "pPr"), style);
    if (onlyMath) {
      out.text("formula", text, 0, depth);
    } else if (style.equals("title")) {
      out.text("title", text, 0, depth);
    } else if (heading.matches()) {
      out.text("section_header", text, Math.max(1, Math.min(6, Integer.parseInt(heading.group(1)))), depth);
    } else if (style.equals("caption")) {
      out.text("caption", text, 0, depth);
    } else if (ilvl != null) {
      // A list item sits in a list group (depth 1); each indent level nests one group deeper.
      out.text("list_item", text, 0, depth + 1 + ilvl);
    } else {
      out.text("text", text, 0, depth);
    }
  }

  /** Whether the paragraph's only runs with text are math. */
  private static boolean mathOnly(Element p) {
    for (Element t : DocxXml.descendants(p, W, "t")) {
      if (!DocxXml.text(t).isBlank() && !insideMath(t)) {
        return false;
      }
    }
    return true;
  }

  private static boolean insideMath(Node n) {
    for (Node x = n.getParentNode(); x != null; x = x.getParentNode()) {
      if (Omml.NS.equals(x.getNamespaceURI())) {
        return true;
      }
    }
    return false;
  }

  /** Inline content: runs and everything that wraps runs. */
  private void inline(Element parent, Inline in) {
    enter("DOCX runs in hyperlinks, fields and content controls");
    try {
      inlineIn(parent, in);
    } finally {
      level--;
    }
  }

  private void inlineIn(Element parent, Inline in) {
    for (Element e : DocxXml.elements(parent)) {
      String ns = e.getNamespaceURI();
      String name = e.getLocalName();
      if (W.equals(ns)) {
        switch (name) {
          case "r" -> run(e, in);
          case "hyperlink", "smartTag", "fldSimple", "ins", "moveTo", "customXml", "dir", "bdo" -> inline(e, in);
          case "sdt" -> {
            Element content = DocxXml.child(e, W, "sdtContent");
            if (content != null) {
              inline(content, in);
            }
          }
          default -> { }
        }
      } else if (Omml.NS.equals(ns)) {
        if (name.equals("oMathPara")) {
          in.displayMath.addAll(DocxXml.descendants(e, Omml.NS, "oMath"));
        } else if (name.equals("oMath")) {
          String latex = Omml.latex(e);
          if (!latex.isEmpty()) {
            in.inlineMath = true;
            in.text.append(' ').append(latex).append(' ');
          }
        }
      } else if (MC.equals(ns) && name.equals("AlternateContent")) {
        Element branch = DocxXml.alternative(e);
        if (branch != null) {
          inline(branch, in);
        }
      }
    }
  }

  private void run(Element r, Inline in) {
    Element rPr = DocxXml.child(r, W, "rPr");
    boolean runHasText = false;
    for (Element e : DocxXml.elements(r)) {
      if (MC.equals(e.getNamespaceURI()) && e.getLocalName().equals("AlternateContent")) {
        Element branch = DocxXml.alternative(e);
        if (branch != null) {
          objects(branch, in);
        }
        continue;
      }
      if (!W.equals(e.getNamespaceURI())) {
        continue;
      }
      switch (e.getLocalName()) {
        case "t" -> {
          in.text.append(DocxXml.text(e));
          runHasText |= !DocxXml.text(e).isBlank();
        }
        case "tab", "ptab" -> in.text.append('\t');
        case "br", "cr" -> {
          if (!"page".equals(e.getAttributeNS(W, "type")) && !"column".equals(e.getAttributeNS(W, "type"))) {
            in.text.append('\n');
          }
        }
        case "noBreakHyphen" -> in.text.append('-');
        case "sym" -> {
          try {
            in.text.appendCodePoint(Integer.parseInt(e.getAttributeNS(W, "char"), 16));
          } catch (IllegalArgumentException ignored) {
            // A symbol without a readable code is no text.
          }
        }
        case "drawing", "pict", "object" -> objects(e, in);
        default -> { }
      }
    }
    if (runHasText) {
      in.anyRun = true;
      in.monospace &= monospace(rPr);
    }
  }

  /** Text boxes and pictures inside a drawing, a VML shape or an embedded object. */
  private static void objects(Element e, Inline in) {
    List<Element> boxes = DocxXml.descendants(e, W, "txbxContent");
    in.textBoxes.addAll(boxes);
    if (!boxes.isEmpty()) {
      return;
    }
    for (Element pic : DocxXml.descendants(e, PIC, "pic")) {
      Element nv = DocxXml.child(pic, PIC, "nvPicPr");
      Element c = nv == null ? null : DocxXml.child(nv, PIC, "cNvPr");
      in.pictures.add(c == null ? "" : c.getAttribute("descr").strip().replaceAll("\\s+", " "));
    }
    for (Element img : DocxXml.descendants(e, VML, "imagedata")) {
      in.pictures.add(img.getAttributeNS("urn:schemas-microsoft-com:office:office", "title").strip());
    }
  }

  private boolean monospace(Element rPr) {
    Element fonts = rPr == null ? null : DocxXml.child(rPr, W, "rFonts");
    if (fonts == null) {
      return false;
    }
    String ascii = fonts.getAttributeNS(W, "ascii");
    return !ascii.isEmpty() && MONOSPACE.matcher(ascii).matches();
  }

  private String styleName(Element pPr) {
    String id = DocxXml.val(pPr, "pStyle");
    if (id == null) {
      return "";
    }
    return styleNames.computeIfAbsent(id, k -> {
      XWPFStyle style = doc.getStyles() == null ? null : doc.getStyles().getStyle(k);
      String name = style != null && style.getName() != null ? style.getName() : k;
      return name.toLowerCase(Locale.ROOT).strip();
    });
  }

  /**
   * The indent level when the paragraph is a list item, else null. Explicit numbering with numId
   * 0 switches numbering off even under a list style (Word's way of "continuing" a paragraph).
   */
  private static Integer listLevel(Element pPr, String style) {
    Element numPr = pPr == null ? null : DocxXml.child(pPr, W, "numPr");
    String numId = numPr == null ? null : DocxXml.val(numPr, "numId");
    if (numId != null) {
      if (numId.strip().equals("0")) {
        return null;
      }
      String ilvl = DocxXml.val(numPr, "ilvl");
      try {
        return ilvl == null ? 0 : Math.max(0, Math.min(8, Integer.parseInt(ilvl.strip())));
      } catch (NumberFormatException e) {
        return 0;
      }
    }
    if (style.startsWith("list bullet") || style.startsWith("list number")) {
      return 0;
    }
    return null;
  }

  /**
   * A table as a rectangular grid: a cell spanning columns (gridSpan) or rows (vMerge) repeats its
   * text in every grid position it covers, as docling's Markdown export does; gridBefore and
   * gridAfter leave empty positions. A table nested in a cell follows as a table of its own.
   */
  private void table(Element tbl, int depth) {
    List<Element> rows = rows(tbl);
    List<List<Element>> cells = new ArrayList<>();
    for (Element tr : rows) {
      cells.add(cells(tr));
    }
    if (cells.size() == 1 && cells.get(0).size() == 1) {
      // A one-cell table frames its content; it is not tabular data.
      blocks(cells.get(0).get(0), depth);
      return;
    }
    flushCode();
    List<Element> nested = new ArrayList<>();
    TableGrid grid = new TableGrid(out.budget());
    Map<Integer, String> openVertical = new HashMap<>();
    for (int r = 0; r < rows.size(); r++) {
      Element trPr = DocxXml.child(rows.get(r), W, "trPr");
      int line = grid.addRow();
      // Empty positions before the row's first cell: checked against the table's limit first.
      grid.append(line, "", Math.max(0, number(DocxXml.val(trPr, "gridBefore"), 0)));
      for (Element tc : cells.get(r)) {
        Element tcPr = DocxXml.child(tc, W, "tcPr");
        int span = Math.max(1, Math.min(64, number(DocxXml.val(tcPr, "gridSpan"), 1)));
        String text = cellText(tc, nested);
        int col = grid.rowLength(line);
        Element vMerge = tcPr == null ? null : DocxXml.child(tcPr, W, "vMerge");
        if (vMerge != null) {
          String merge = vMerge.getAttributeNS(W, "val");
          if (merge.isEmpty() || merge.equals("continue")) {
            text = openVertical.getOrDefault(col, "");
          } else {
            openVertical.put(col, text);
          }
        } else {
          openVertical.remove(col);
        }
        grid.append(line, text, span);
      }
    }
    String markdown = grid.markdown();
    if (!markdown.isEmpty()) {
      out.table(markdown, depth);
    }
    enter("DOCX tables in table cells");
    try {
      for (Element t : nested) {
        table(t, depth);
      }
    } finally {
      level--;
    }
  }

  private static int number(String s, int fallback) {
    try {
      return s == null ? fallback : Integer.parseInt(s.strip());
    } catch (NumberFormatException e) {
      return fallback;
    }
  }

  /** Rows of a table, also those wrapped in content controls or custom XML. */
  private static List<Element> rows(Element tbl) {
    List<Element> out = new ArrayList<>();
    collect(tbl, "tr", out);
    return out;
  }

  private static List<Element> cells(Element tr) {
    List<Element> out = new ArrayList<>();
    collect(tr, "tc", out);
    return out;
  }

  private static void collect(Element parent, String local, List<Element> out) {
    for (Element e : DocxXml.elements(parent)) {
      if (DocxXml.is(e, W, local)) {
        out.add(e);
      } else if (DocxXml.is(e, W, "sdt")) {
        Element content = DocxXml.child(e, W, "sdtContent");
        if (content != null) {
          collect(content, local, out);
        }
      } else if (DocxXml.is(e, W, "customXml")) {
        collect(e, local, out);
      }
    }
  }

  /** A cell's paragraphs (and the text boxes in them) joined by spaces; nested tables set aside. */
  private String cellText(Element tc, List<Element> nested) {
    StringBuilder sb = new StringBuilder();
    cellBlocks(tc, sb, nested);
    return sb.toString().replaceAll("\\s+", " ").strip();
  }

  private void cellBlocks(Element container, StringBuilder sb, List<Element> nested) {
    enter("DOCX text boxes and content controls in table cells");
    try {
      cellBlocksIn(container, sb, nested);
    } finally {
      level--;
    }
  }

  private void cellBlocksIn(Element container, StringBuilder sb, List<Element> nested) {
    for (Element e : DocxXml.elements(container)) {
      if (DocxXml.is(e, W, "p")) {
        Inline in = new Inline();
        inline(e, in);
        sb.append(' ').append(in.text);
        for (Element math : in.displayMath) {
          sb.append(' ').append(Omml.latex(math));
        }
        for (Element box : in.textBoxes) {
          cellBlocks(box, sb, nested);
        }
      } else if (DocxXml.is(e, W, "tbl")) {
        nested.add(e);
      } else if (DocxXml.is(e, W, "sdt")) {
        Element content = DocxXml.child(e, W, "sdtContent");
        if (content != null) {
          cellBlocks(content, sb, nested);
        }
      } else if (DocxXml.is(e, W, "customXml") || DocxXml.is(e, MC, "AlternateContent")) {
        Element branch = DocxXml.is(e, MC, "AlternateContent") ? DocxXml.alternative(e) : e;
        if (branch != null) {
          cellBlocks(branch, sb, nested);
        }
      }
    }
  }
}
