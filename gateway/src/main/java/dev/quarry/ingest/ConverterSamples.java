package dev.quarry.ingest;

import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.apache.pdfbox.pdmodel.PDDocument;
import org.apache.pdfbox.pdmodel.PDPage;
import org.apache.pdfbox.pdmodel.PDPageContentStream;
import org.apache.pdfbox.pdmodel.common.PDRectangle;
import org.apache.pdfbox.pdmodel.font.PDType1Font;
import org.apache.pdfbox.pdmodel.font.Standard14Fonts.FontName;
import org.apache.pdfbox.pdmodel.graphics.image.LosslessFactory;

/**
 * A small document of each format that reaches what its converter reads (headings, lists, tables
 * with spans, pictures, math, text boxes, headers and footers, a ruled PDF table), made in code.
 * {@link ConverterHealth} converts each one before the gateway serves, so that the libraries'
 * static initialisers (XMLBeans' schema types, the JDK's XML character tables, PDFBox's fonts) run
 * while the heap is empty and not for the first time inside a hostile upload; and again after a
 * conversion ran out of memory, to see whether its format still converts.
 */
final class ConverterSamples {
  private ConverterSamples() {}

  /** One sample per format, with the file name it is converted under. */
  record Sample(String fileName, byte[] bytes) {}

  static Map<SourceType, Sample> all() {
    Map<SourceType, Sample> m = new EnumMap<>(SourceType.class);
    m.put(SourceType.TEXT, new Sample("check.txt", utf8("Converter check\n\nA paragraph of text.\n")));
    m.put(SourceType.MARKDOWN, new Sample("check.md", utf8("""
        # Converter check

        ## A section

        A paragraph with *emphasis*, `code` and a [link](#a).

        - one
          - nested
        1. first

        > a quote

        | a | b |
        |---|---|
        | 1 | 2 |

        <table><tr><td colspan="2">html</td></tr></table>

        ```
        code block
        ```
        """)));
    m.put(SourceType.HTML, new Sample("check.html", utf8("""
        <!DOCTYPE html><html><head><title>Converter check</title><style>p{}</style></head><body>
        <h1>Converter check</h1><h2>A section</h2><p>A paragraph with <b>bold</b> text.</p>
        <ul><li>one<ul><li>nested</li></ul></li></ul><dl><dt>term</dt><dd>description</dd></dl>
        <table><caption>Spans</caption><thead><tr><th colspan="2">both</th><th rowspan="0">all</th></tr></thead>
        <tbody><tr><td>a</td><td>b</td></tr></tbody></table>
        <figure><img alt="a picture"><figcaption>A figure</figcaption></figure>
        <pre>code</pre><blockquote>quoted</blockquote></body></html>
        """)));
    m.put(SourceType.DOCLING, new Sample("check.json", utf8("""
        {"schema_name": "DoclingDocument", "version": "1.0.0", "name": "check",
         "body": {"self_ref": "#/body", "children": [{"$ref": "#/texts/0"}, {"$ref": "#/groups/0"},
           {"$ref": "#/tables/0"}, {"$ref": "#/tables/1"}, {"$ref": "#/pictures/0"}]},
         "furniture": {"self_ref": "#/furniture", "children": [{"$ref": "#/texts/4"}]},
         "texts": [
           {"self_ref": "#/texts/0", "label": "section_header", "level": 1, "text": "Converter check",
            "prov": [{"page_no": 1}]},
           {"self_ref": "#/texts/1", "label": "list_item", "text": "one", "prov": [{"page_no": 1}]},
           {"self_ref": "#/texts/2", "label": "text", "text": "inline", "prov": [{"page_no": 1}]},
           {"self_ref": "#/texts/3", "label": "caption", "text": "A picture", "prov": [{"page_no": 1}]},
           {"self_ref": "#/texts/4", "label": "page_header", "text": "Header", "content_layer": "furniture",
            "prov": [{"page_no": 1}]}],
         "groups": [{"self_ref": "#/groups/0", "label": "list", "children": [{"$ref": "#/texts/1"},
           {"$ref": "#/groups/1"}]}, {"self_ref": "#/groups/1", "label": "inline",
           "children": [{"$ref": "#/texts/2"}]}],
         "tables": [
           {"self_ref": "#/tables/0", "label": "table", "data": {"grid": [[{"text": "a"}, {"text": "b"}],
             [{"text": "1"}]]}, "prov": [{"page_no": 1}]},
           {"self_ref": "#/tables/1", "label": "table", "data": {"num_rows": 2, "num_cols": 2,
             "table_cells": [{"text": "span", "start_row_offset_idx": 0, "end_row_offset_idx": 1,
               "start_col_offset_idx": 0, "end_col_offset_idx": 2}, {"text": "x",
               "start_row_offset_idx": 1, "end_row_offset_idx": 2, "start_col_offset_idx": 1,
               "end_col_offset_idx": 2}]}}],
         "pictures": [{"self_ref": "#/pictures/0", "label": "picture", "captions": [{"$ref": "#/texts/3"}]}]}
        """)));
    m.put(SourceType.DOCX, new Sample("check.docx", docx()));
    m.put(SourceType.PDF, new Sample("check.pdf", pdf()));
    return m;
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static final String NS = " xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\""
      + " xmlns:m=\"http://schemas.openxmlformats.org/officeDocument/2006/math\""
      + " xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\""
      + " xmlns:mc=\"http://schemas.openxmlformats.org/markup-compatibility/2006\""
      + " xmlns:wps=\"http://schemas.microsoft.com/office/word/2010/wordprocessingShape\""
      + " xmlns:wp=\"http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing\""
      + " xmlns:a=\"http://schemas.openxmlformats.org/drawingml/2006/main\""
      + " xmlns:pic=\"http://schemas.openxmlformats.org/drawingml/2006/picture\"";
  private static final String XML = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>";
  private static final String RELS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/";
  private static final String WML = "application/vnd.openxmlformats-officedocument.wordprocessingml.";

  private static String p(String style, String text) {
    return "<w:p>" + (style == null ? "" : "<w:pPr><w:pStyle w:val=\"" + style + "\"/></w:pPr>")
        + "<w:r><w:t xml:space=\"preserve\">" + text + "</w:t></w:r></w:p>";
  }

  private static String style(String id, String name) {
    return "<w:style w:type=\"paragraph\" w:styleId=\"" + id + "\"><w:name w:val=\"" + name + "\"/></w:style>";
  }

  private static String cell(String props, String text) {
    return "<w:tc><w:tcPr>" + props + "</w:tcPr>" + p(null, text) + "</w:tc>";
  }

  private static byte[] docx() {
    String table = "<w:tbl><w:tr><w:trPr><w:gridBefore w:val=\"1\"/></w:trPr>"
        + cell("<w:gridSpan w:val=\"2\"/>", "span") + "</w:tr><w:tr>"
        + cell("<w:vMerge w:val=\"restart\"/>", "merged") + cell("", "b")
        + "<w:tc>" + p(null, "c") + "<w:tbl><w:tr>" + cell("", "n1") + cell("", "n2") + "</w:tr></w:tbl></w:tc>"
        + "</w:tr><w:tr>" + cell("<w:vMerge/>", "") + cell("", "e") + cell("", "f") + "</w:tr></w:tbl>";
    String math = "<w:p><m:oMathPara><m:oMath><m:f><m:num><m:r><m:t>a</m:t></m:r></m:num><m:den><m:r>"
        + "<m:t>b</m:t></m:r></m:den></m:f><m:sSup><m:e><m:r><m:t>x</m:t></m:r></m:e><m:sup><m:r><m:t>2</m:t>"
        + "</m:r></m:sup></m:sSup></m:oMath></m:oMathPara></w:p>";
    String textBox = "<w:p><w:r><mc:AlternateContent><mc:Choice Requires=\"wps\"><w:drawing><wp:anchor>"
        + "<a:graphic><a:graphicData><wps:wsp><wps:txbx><w:txbxContent>" + p(null, "in a text box")
        + "</w:txbxContent></wps:txbx></wps:wsp></a:graphicData></a:graphic></wp:anchor></w:drawing>"
        + "</mc:Choice></mc:AlternateContent></w:r></w:p>";
    String picture = "<w:p><w:r><w:drawing><wp:inline><a:graphic><a:graphicData><pic:pic><pic:nvPicPr>"
        + "<pic:cNvPr id=\"1\" name=\"p\" descr=\"a picture\"/></pic:nvPicPr></pic:pic></a:graphicData>"
        + "</a:graphic></wp:inline></w:drawing></w:r></w:p>";
    String body = p("Title", "Converter check") + p("Heading1", "A section")
        + "<w:p><w:pPr><w:numPr><w:ilvl w:val=\"0\"/><w:numId w:val=\"1\"/></w:numPr></w:pPr><w:hyperlink w:anchor=\"a\">"
        + "<w:r><w:t>a list item</w:t></w:r></w:hyperlink></w:p>"
        + "<w:sdt><w:sdtContent>" + p(null, "in a content control") + "</w:sdtContent></w:sdt>"
        + table + p("Caption", "Table 1") + math + textBox + picture + p("Code", "code line")
        + "<w:sectPr><w:headerReference w:type=\"default\" r:id=\"rId2\"/>"
        + "<w:footerReference w:type=\"default\" r:id=\"rId3\"/></w:sectPr>";
    Map<String, String> parts = new java.util.LinkedHashMap<>();
    parts.put("[Content_Types].xml", XML + "<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\">"
        + "<Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/>"
        + "<Default Extension=\"xml\" ContentType=\"application/xml\"/>"
        + "<Override PartName=\"/word/document.xml\" ContentType=\"" + WML + "document.main+xml\"/>"
        + "<Override PartName=\"/word/styles.xml\" ContentType=\"" + WML + "styles+xml\"/>"
        + "<Override PartName=\"/word/header1.xml\" ContentType=\"" + WML + "header+xml\"/>"
        + "<Override PartName=\"/word/footer1.xml\" ContentType=\"" + WML + "footer+xml\"/>"
        + "<Override PartName=\"/docProps/core.xml\" ContentType=\"application/vnd.openxmlformats-package.core-properties+xml\"/>"
        + "</Types>");
    parts.put("_rels/.rels", XML + "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">"
        + "<Relationship Id=\"rId1\" Type=\"" + RELS + "officeDocument\" Target=\"word/document.xml\"/>"
        + "<Relationship Id=\"rId2\" Type=\"http://schemas.openxmlformats.org/package/2006/relationships/metadata/"
        + "core-properties\" Target=\"docProps/core.xml\"/></Relationships>");
    parts.put("docProps/core.xml", XML + "<cp:coreProperties xmlns:cp=\"http://schemas.openxmlformats.org/package/2006/"
        + "metadata/core-properties\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><dc:title>Converter check</dc:title>"
        + "</cp:coreProperties>");
    parts.put("word/_rels/document.xml.rels", XML + "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/"
        + "relationships\"><Relationship Id=\"rId1\" Type=\"" + RELS + "styles\" Target=\"styles.xml\"/>"
        + "<Relationship Id=\"rId2\" Type=\"" + RELS + "header\" Target=\"header1.xml\"/>"
        + "<Relationship Id=\"rId3\" Type=\"" + RELS + "footer\" Target=\"footer1.xml\"/></Relationships>");
    parts.put("word/styles.xml", XML + "<w:styles" + NS + ">" + style("Title", "Title") + style("Heading1", "heading 1")
        + style("Caption", "caption") + style("Code", "Code") + "</w:styles>");
    parts.put("word/header1.xml", XML + "<w:hdr" + NS + ">" + p(null, "A header") + "</w:hdr>");
    parts.put("word/footer1.xml", XML + "<w:ftr" + NS + ">" + p(null, "A footer") + "</w:ftr>");
    parts.put("word/document.xml", XML + "<w:document" + NS + "><w:body>" + body + "</w:body></w:document>");
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (ZipOutputStream zip = new ZipOutputStream(out)) {
      for (Map.Entry<String, String> e : parts.entrySet()) {
        zip.putNextEntry(new ZipEntry(e.getKey()));
        zip.write(utf8(e.getValue()));
        zip.closeEntry();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  /** A page with a heading, paragraphs, a ruled table and a picture. */
  private static byte[] pdf() {
    try (PDDocument doc = new PDDocument(); ByteArrayOutputStream out = new ByteArrayOutputStream()) {
      PDPage page = new PDPage(PDRectangle.LETTER);
      doc.addPage(page);
      PDType1Font bold = new PDType1Font(FontName.HELVETICA_BOLD);
      PDType1Font body = new PDType1Font(FontName.TIMES_ROMAN);
      float top = PDRectangle.LETTER.getHeight();
      try (PDPageContentStream c = new PDPageContentStream(doc, page)) {
        text(c, bold, 18, 72, top - 72, "Converter check");
        for (int i = 0; i < 6; i++) {
          text(c, body, 11, 72, top - 110 - 14 * i, "A line of body text, number " + (i + 1) + ", long enough to read.");
        }
        float y0 = top - 220;
        for (int r = 0; r <= 3; r++) {
          c.moveTo(72, y0 - 20 * r);
          c.lineTo(372, y0 - 20 * r);
        }
        for (int col = 0; col <= 3; col++) {
          c.moveTo(72 + 100 * col, y0);
          c.lineTo(72 + 100 * col, y0 - 60);
        }
        c.stroke();
        for (int r = 0; r < 3; r++) {
          for (int col = 0; col < 3; col++) {
            text(c, body, 10, 78 + 100 * col, y0 - 14 - 20 * r, r == 0 ? "Year " + (2020 + col) : (r * 10 + col) + ".5");
          }
        }
        BufferedImage image = new BufferedImage(4, 4, BufferedImage.TYPE_INT_RGB);
        c.drawImage(LosslessFactory.createFromImage(doc, image), 72, top - 420, 100, 100);
      }
      doc.getDocumentInformation().setTitle("Converter check");
      doc.save(out);
      return out.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void text(PDPageContentStream c, PDType1Font font, float size, float x, float y, String s)
      throws IOException {
    c.beginText();
    c.setFont(font, size);
    c.newLineAtOffset(x, y);
    c.showText(s);
    c.endText();
  }
}
