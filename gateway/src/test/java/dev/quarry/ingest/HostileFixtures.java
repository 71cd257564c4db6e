package dev.quarry.ingest;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.zip.Deflater;
import java.util.zip.DeflaterOutputStream;

/**
 * Hostile sources, one per way a small file can ask a converter for a large structure, built in
 * code (each at most 1 MB). The first four are the red team's of issue 33, as it described them.
 * The ingest-memory benchmark ingests every one of them too, so they are public: {@link #all()}.
 */
public final class HostileFixtures {
  private HostileFixtures() {}

  /** A named hostile source, with the class of hostility it stands for. */
  public record Fixture(String name, String hostility, byte[] bytes) {}

  private static Map<String, Fixture> all;

  /** Every fixture, by name (built once). */
  public static synchronized Map<String, Fixture> all() {
    if (all == null) {
      all = java.util.Collections.unmodifiableMap(build());
    }
    return all;
  }

  private static Map<String, Fixture> build() {
    Map<String, Fixture> m = new LinkedHashMap<>();
    for (Fixture f : new Fixture[] {
        new Fixture("spans.html", "HTML colspan=1000 rowspan=65535, 49 KB (issue 33)", htmlSpans()),
        new Fixture("grid.json", "docling data.grid: one wide row and 60,000 empty ones (issue 33)", doclingGrid()),
        new Fixture("header.md", "GFM table with a 60,000-column header (issue 33)", gfmHeader(60_000, 300)),
        new Fixture("gridbefore.docx", "DOCX w:gridBefore 1,500,000,000 in 1 KB (issue 33)", docxGridBefore()),
        new Fixture("gridspan.docx", "DOCX rows of cells each w:gridSpan 64", docxGridSpan()),
        new Fixture("vmerge.docx", "DOCX 6,000 rows of vertically merged cells under a wide row", docxVMerge()),
        new Fixture("elements.docx", "DOCX whose XML inflates to millions of empty paragraphs", docxElements()),
        new Fixture("parts.docx", "DOCX of eight images inflating to 60 MB each", docxParts()),
        new Fixture("nested.docx", "DOCX content controls nested 2,000 deep", docxNested()),
        new Fixture("cells.json", "docling table_cells: 3,000 cells each spanning a 300x300 grid", doclingCells()),
        new Fixture("declared.json", "docling num_rows x num_cols of 50,000 x 50,000", doclingDeclared()),
        new Fixture("captions.json", "docling: one 50 KB caption referenced by 2,000 pictures", doclingCaptions()),
        new Fixture("quotes.md", "Markdown quotes nested 200,000 deep", utf8(">".repeat(200_000) + " a\n")),
        new Fixture("emphasis.md", "Markdown emphasis nested 100,000 deep", utf8("*".repeat(100_000) + "a"
            + "*".repeat(100_000) + "\n")),
        new Fixture("angles.md", "Markdown of '<a ' repeated, 1 MB: each '<' scanned the rest of the paragraph for '>'"
            + " (red team round 8)", utf8("<a ".repeat(349_000) + "\n")),
        new Fixture("nested.html", "HTML elements nested 80,000 deep", utf8("<html><body>" + "<div>".repeat(80_000)
            + "a" + "</div>".repeat(80_000) + "</body></html>")),
        new Fixture("items.txt", "plain text of 333,000 paragraphs", utf8("a\n\n".repeat(333_000))),
        new Fixture("listitems.md", "Markdown list of 250,000 items", utf8("- a\n".repeat(250_000))),
        new Fixture("font.pdf", "PDF font program inflating to 600 MB", pdfFont(600L << 20)),
        new Fixture("form.pdf", "PDF form XObject inflating to 600 MB", pdfForm(600L << 20)),
        new Fixture("inline.pdf", "PDF inline image inflating to 600 MB", pdfInlineImage(600L << 20)),
        new Fixture("glyphs.pdf", "PDF of 2,000 pages drawing one stream of 40,000 glyphs", pdfGlyphFlood(2_000, 40_000)),
        new Fixture("names.pdf", "PDF naming 200,000 distinct marked-content tags", pdfNames(200_000)),
    }) {
      m.put(f.name(), f);
    }
    return m;
  }

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** The red team's HTML: rows of one cell of colspan=1000 rowspan=65535, 49 KB. */
  static byte[] htmlSpans() {
    StringBuilder sb = new StringBuilder("<html><body><table>");
    while (sb.length() < 49_000) {
      sb.append("<tr><td colspan=1000 rowspan=65535>x</td></tr>");
    }
    return utf8(sb.append("</table></body></html>").toString());
  }

  /** A DoclingDocument of one table item whose data is {@code dataJson}. */
  static String doclingTable(String dataJson) {
    return "{\"schema_name\":\"DoclingDocument\",\"version\":\"1.0.0\",\"name\":\"t\","
        + "\"body\":{\"self_ref\":\"#/body\",\"children\":[{\"$ref\":\"#/tables/0\"}]},"
        + "\"texts\":[],\"groups\":[],\"pictures\":[],\"tables\":[{\"self_ref\":\"#/tables/0\",\"label\":\"table\","
        + "\"data\":" + dataJson + "}]}";
  }

  /** A docling grid of one row {@code width} wide, then {@code emptyRows} empty rows. */
  static byte[] doclingGrid(int width, int emptyRows) {
    StringBuilder grid = new StringBuilder("[[");
    for (int i = 0; i < width; i++) {
      grid.append(i > 0 ? "," : "").append("{\"text\":\"c\"}");
    }
    grid.append("]");
    grid.append(",[]".repeat(emptyRows));
    return utf8(doclingTable("{\"grid\":" + grid.append("]") + "}"));
  }

  static byte[] doclingGrid() {
    return doclingGrid(5_000, 60_000);
  }

  static byte[] doclingCells() {
    StringBuilder cells = new StringBuilder();
    for (int i = 0; i < 3_000; i++) {
      cells.append(i > 0 ? "," : "").append("{\"text\":\"c\",\"start_row_offset_idx\":0,\"end_row_offset_idx\":300,"
          + "\"start_col_offset_idx\":0,\"end_col_offset_idx\":300}");
    }
    return utf8(doclingTable("{\"num_rows\":300,\"num_cols\":300,\"table_cells\":[" + cells + "]}"));
  }

  static byte[] doclingDeclared() {
    return utf8(doclingTable("{\"num_rows\":50000,\"num_cols\":50000,\"table_cells\":[]}"));
  }

  static byte[] doclingCaptions() {
    StringBuilder pictures = new StringBuilder();
    StringBuilder children = new StringBuilder();
    for (int i = 0; i < 2_000; i++) {
      pictures.append(i > 0 ? "," : "").append("{\"self_ref\":\"#/pictures/").append(i)
          .append("\",\"label\":\"picture\",\"captions\":[{\"$ref\":\"#/texts/0\"}]}");
      children.append(",{\"$ref\":\"#/pictures/").append(i).append("\"}");
    }
    String caption = "a caption ".repeat(5_000);
    return utf8("{\"schema_name\":\"DoclingDocument\",\"version\":\"1.0.0\",\"name\":\"c\","
        + "\"body\":{\"self_ref\":\"#/body\",\"children\":[{\"$ref\":\"#/texts/0\"}" + children + "]},"
        + "\"texts\":[{\"self_ref\":\"#/texts/0\",\"label\":\"caption\",\"text\":\"" + caption + "\"}],"
        + "\"groups\":[],\"tables\":[],\"pictures\":[" + pictures + "]}");
  }

  /** A GFM table with a header {@code columns} wide and {@code rows} rows of one cell. */
  static byte[] gfmHeader(int columns, int rows) {
    StringBuilder sb = new StringBuilder();
    sb.append("|a".repeat(columns)).append("|\n");
    sb.append("|-".repeat(columns)).append("|\n");
    sb.append("x\n".repeat(rows));
    return utf8(sb.toString());
  }

  private static String tc(String props, String text) {
    return "<w:tc>" + (props.isEmpty() ? "" : "<w:tcPr>" + props + "</w:tcPr>") + "<w:p><w:r><w:t>" + text
        + "</w:t></w:r></w:p></w:tc>";
  }

  static byte[] docxGridBefore() {
    return DocxFixture.docx("<w:tbl><w:tr><w:trPr><w:gridBefore w:val=\"1500000000\"/></w:trPr>"
        + tc("", "a") + tc("", "b") + "</w:tr></w:tbl>");
  }

  static byte[] docxGridSpan() {
    StringBuilder row = new StringBuilder("<w:tbl>");
    for (int r = 0; r < 4; r++) {
      row.append("<w:tr>");
      for (int c = 0; c < 1_000; c++) {
        row.append(tc("<w:gridSpan w:val=\"64\"/>", "s"));
      }
      row.append("</w:tr>");
    }
    return DocxFixture.docx(row.append("</w:tbl>").toString());
  }

  static byte[] docxVMerge() {
    StringBuilder t = new StringBuilder("<w:tbl><w:tr>");
    for (int c = 0; c < 200; c++) {
      t.append(tc("<w:vMerge w:val=\"restart\"/>", "head " + c));
    }
    t.append("</w:tr>");
    for (int r = 0; r < 6_000; r++) {
      t.append("<w:tr>").append(tc("<w:vMerge/>", "")).append("</w:tr>");
    }
    return DocxFixture.docx(t.append("</w:tbl>").toString());
  }

  /**
   * Millions of empty paragraphs, with a little random text between every thousand, so that the
   * XML inflates about 85 times (under the archive-bomb guard's 100).
   */
  static byte[] docxElements() {
    Random random = new Random(33);
    StringBuilder body = new StringBuilder();
    while (body.length() < 40_000_000) {
      body.append("<w:p/>".repeat(1_000)).append("<!--");
      for (int i = 0; i < 70; i++) {
        body.append((char) ('a' + random.nextInt(26)));
      }
      body.append("-->");
    }
    return DocxFixture.docx(body.toString());
  }

  static byte[] docxParts() {
    Map<String, byte[]> images = new LinkedHashMap<>();
    byte[] image = new byte[60 << 20];
    for (int i = 0; i < 8; i++) {
      images.put("word/media/image" + i + ".emf", image);
    }
    return DocxFixture.docx(DocxFixture.p("eight pictures"), images);
  }

  static byte[] docxNested() {
    return DocxFixture.docx("<w:sdt><w:sdtContent>".repeat(2_000) + DocxFixture.p("deep")
        + "</w:sdtContent></w:sdt>".repeat(2_000));
  }

  // ---- PDFs, written object by object so that a stream can be any bytes ----

  static byte[] deflate(byte[] unit, long total) {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    try (DeflaterOutputStream z = new DeflaterOutputStream(b, new Deflater(9))) {
      for (long n = 0; n < total; n += unit.length) {
        z.write(unit);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return b.toByteArray();
  }

  /** A PDF of the objects {@code objs} (number to dictionary); those in {@code streams} get that stream. */
  static byte[] pdf(TreeMap<Integer, String> objs, Map<Integer, byte[]> streams) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    Map<Integer, Integer> offsets = new HashMap<>();
    latin1(out, "%PDF-1.5\n");
    for (Map.Entry<Integer, String> e : objs.entrySet()) {
      offsets.put(e.getKey(), out.size());
      latin1(out, e.getKey() + " 0 obj\n" + e.getValue());
      byte[] s = streams.get(e.getKey());
      if (s != null) {
        latin1(out, "\nstream\n");
        out.writeBytes(s);
        latin1(out, "\nendstream");
      }
      latin1(out, "\nendobj\n");
    }
    int xref = out.size();
    int size = objs.lastKey() + 1;
    StringBuilder x = new StringBuilder("xref\n0 " + size + "\n0000000000 65535 f \n");
    for (int n = 1; n < size; n++) {
      x.append(String.format("%010d 00000 n \n", offsets.getOrDefault(n, 0)));
    }
    x.append("trailer\n<< /Size ").append(size).append(" /Root 1 0 R >>\nstartxref\n").append(xref).append("\n%%EOF\n");
    latin1(out, x.toString());
    return out.toByteArray();
  }

  private static void latin1(ByteArrayOutputStream out, String s) {
    out.writeBytes(s.getBytes(StandardCharsets.ISO_8859_1));
  }

  /** Catalog, pages and one page (object 3) whose contents are object 5, with {@code resources}. */
  static TreeMap<Integer, String> onePage(String resources) {
    TreeMap<Integer, String> o = new TreeMap<>();
    o.put(1, "<< /Type /Catalog /Pages 2 0 R >>");
    o.put(2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>");
    o.put(3, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R /Resources " + resources + " >>");
    return o;
  }

  private static final String TEXT = "BT /F1 12 Tf 72 700 Td (Quarry hostile fixture text) Tj ET\n";
  private static final String HELVETICA = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>";

  static byte[] pdfFont(long inflated) {
    TreeMap<Integer, String> o = onePage("<< /Font << /F1 4 0 R >> >>");
    o.put(4, "<< /Type /Font /Subtype /TrueType /BaseFont /Bomb /FirstChar 32 /LastChar 126 /Widths ["
        + "500 ".repeat(95) + "] /FontDescriptor 6 0 R >>");
    byte[] content = TEXT.getBytes(StandardCharsets.ISO_8859_1);
    o.put(5, "<< /Length " + content.length + " >>");
    byte[] font = deflate(new byte[4096], inflated);
    o.put(6, "<< /Type /FontDescriptor /FontName /Bomb /Flags 32 /FontBBox [0 0 1000 1000] /ItalicAngle 0"
        + " /Ascent 800 /Descent -200 /CapHeight 700 /StemV 80 /FontFile2 7 0 R >>");
    o.put(7, "<< /Length " + font.length + " /Filter /FlateDecode >>");
    return pdf(o, Map.of(5, content, 7, font));
  }

  static byte[] pdfForm(long inflated) {
    TreeMap<Integer, String> o = onePage("<< /Font << /F1 4 0 R >> /XObject << /X 6 0 R >> >>");
    o.put(4, HELVETICA);
    byte[] content = (TEXT + "/X Do\n").getBytes(StandardCharsets.ISO_8859_1);
    o.put(5, "<< /Length " + content.length + " >>");
    byte[] form = deflate(" ".repeat(4096).getBytes(StandardCharsets.ISO_8859_1), inflated);
    o.put(6, "<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Length " + form.length + " /Filter /FlateDecode >>");
    return pdf(o, Map.of(5, content, 6, form));
  }

  static byte[] pdfInlineImage(long inflated) {
    TreeMap<Integer, String> o = onePage("<< /Font << /F1 4 0 R >> >>");
    o.put(4, HELVETICA);
    ByteArrayOutputStream c = new ByteArrayOutputStream();
    latin1(c, TEXT + "q 100 0 0 100 72 300 cm BI /W 10000 /H 10000 /BPC 8 /CS /G /F /Fl ID ");
    c.writeBytes(deflate(new byte[4096], inflated));
    latin1(c, " EI Q\n");
    byte[] content = c.toByteArray();
    o.put(5, "<< /Length " + content.length + " >>");
    return pdf(o, Map.of(5, content));
  }

  /**
   * A page whose content stream names {@code names} distinct marked-content tags: PDFBox keeps
   * every name it parses in a static map, for the life of the process.
   */
  static byte[] pdfNames(int names) {
    TreeMap<Integer, String> o = onePage("<< /Font << /F1 4 0 R >> >>");
    o.put(4, HELVETICA);
    StringBuilder s = new StringBuilder(TEXT);
    for (int i = 0; i < names; i++) {
      s.append("/Q").append(Integer.toString(i + 1_000_000, 36)).append(" BMC EMC\n");
    }
    byte[] content = deflate(s.toString().getBytes(StandardCharsets.ISO_8859_1), s.length());
    o.put(5, "<< /Length " + content.length + " /Filter /FlateDecode >>");
    return pdf(o, Map.of(5, content));
  }

  /** {@code pages} pages that all draw one content stream of {@code glyphs} glyphs. */
  static byte[] pdfGlyphFlood(int pages, int glyphs) {
    TreeMap<Integer, String> o = new TreeMap<>();
    o.put(1, "<< /Type /Catalog /Pages 2 0 R >>");
    StringBuilder kids = new StringBuilder();
    for (int p = 0; p < pages; p++) {
      kids.append(10 + p).append(" 0 R ");
      o.put(10 + p, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R"
          + " /Resources << /Font << /F1 4 0 R >> >> >>");
    }
    o.put(2, "<< /Type /Pages /Kids [" + kids + "] /Count " + pages + " >>");
    o.put(4, HELVETICA);
    StringBuilder s = new StringBuilder("BT /F1 4 Tf 10 780 Td 5 TL\n");
    for (int line = 0; line * 100 < glyphs; line++) {
      s.append("(").append("abcdefghij".repeat(10)).append(") '\n");
    }
    byte[] content = deflate(s.append("ET\n").toString().getBytes(StandardCharsets.ISO_8859_1), s.length());
    o.put(5, "<< /Length " + content.length + " /Filter /FlateDecode >>");
    return pdf(o, Map.of(5, content));
  }
}
