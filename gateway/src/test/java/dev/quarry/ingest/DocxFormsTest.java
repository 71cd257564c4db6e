package dev.quarry.ingest;

import dev.quarry.store.DocItem;

import static dev.quarry.ingest.DocxFixture.docx;
import static dev.quarry.ingest.DocxFixture.p;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.zip.Deflater;
import java.util.zip.DeflaterOutputStream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** DOCX forms written by hand (what Word writes), beyond what the reference files show. */
@DisplayName("DocxConverter on generated documents")
class DocxFormsTest {
  private final DocxConverter converter = new DocxConverter();

  private List<DocItem> items(byte[] docx) throws IngestException {
    return converter.convert("generated.docx", docx).items();
  }

  private static String r(String text) {
    return "<m:r><m:t>" + text + "</m:t></m:r>";
  }

  private static String display(String math) {
    return "<w:p><m:oMathPara><m:oMath>" + math + "</m:oMath></m:oMathPara></w:p>";
  }

  @Test
  @DisplayName("Office Math: each OMML construct becomes its LaTeX, display math a formula item")
  void omml() throws Exception {
    Map<String, String> cases = new java.util.LinkedHashMap<>();
    cases.put("<m:f><m:num>" + r("a") + "</m:num><m:den>" + r("b+c") + "</m:den></m:f>", "\\frac{a}{b+c}");
    cases.put("<m:f><m:fPr><m:type m:val=\"lin\"/></m:fPr><m:num>" + r("1") + "</m:num><m:den>" + r("2")
        + "</m:den></m:f>", "1/2");
    cases.put("<m:sSubSup><m:e>" + r("x") + "</m:e><m:sub>" + r("i") + "</m:sub><m:sup>" + r("2")
        + "</m:sup></m:sSubSup>", "x_{i}^{2}");
    cases.put("<m:sPre><m:sub>" + r("1") + "</m:sub><m:sup>" + r("2") + "</m:sup><m:e>" + r("F") + "</m:e></m:sPre>",
        "{}_{1}^{2}F");
    cases.put("<m:rad><m:deg>" + r("3") + "</m:deg><m:e>" + r("x") + "</m:e></m:rad>", "\\sqrt[3]{x}");
    cases.put("<m:rad><m:radPr><m:degHide m:val=\"1\"/></m:radPr><m:deg/><m:e>" + r("y") + "</m:e></m:rad>",
        "\\sqrt{y}");
    cases.put("<m:nary><m:naryPr><m:chr m:val=\"∑\"/></m:naryPr><m:sub>" + r("i=1") + "</m:sub><m:sup>" + r("n")
        + "</m:sup><m:e><m:sSub><m:e>" + r("x") + "</m:e><m:sub>" + r("i") + "</m:sub></m:sSub></m:e></m:nary>",
        "\\sum_{i=1}^{n}{x_{i}}");
    cases.put("<m:nary><m:sub>" + r("0") + "</m:sub><m:sup>" + r("1") + "</m:sup><m:e>" + r("f") + "</m:e></m:nary>",
        "\\int_{0}^{1}f");
    cases.put("<m:d><m:e>" + r("a") + "</m:e><m:e>" + r("b") + "</m:e></m:d>", "\\left(a|b\\right)");
    cases.put("<m:d><m:dPr><m:begChr m:val=\"[\"/><m:endChr m:val=\"\"/></m:dPr><m:e>" + r("x") + "</m:e></m:d>",
        "\\left[x\\right.");
    cases.put("<m:m><m:mr><m:e>" + r("a") + "</m:e><m:e>" + r("b") + "</m:e></m:mr><m:mr><m:e>" + r("c")
        + "</m:e><m:e>" + r("d") + "</m:e></m:mr></m:m>", "\\begin{matrix}a & b \\\\ c & d\\end{matrix}");
    cases.put("<m:func><m:fName>" + r("sin") + "</m:fName><m:e>" + r("θ") + "</m:e></m:func>", "\\sin(\\theta)");
    cases.put("<m:limLow><m:e>" + r("lim") + "</m:e><m:lim>" + r("n→∞") + "</m:lim></m:limLow>",
        "\\lim_{n \\rightarrow \\infty}");
    cases.put("<m:acc><m:e>" + r("a") + "</m:e></m:acc>", "\\hat{a}");
    cases.put("<m:bar><m:barPr><m:pos m:val=\"top\"/></m:barPr><m:e>" + r("z") + "</m:e></m:bar>", "\\overline{z}");
    cases.put("<m:eqArr><m:e>" + r("x=1") + "</m:e><m:e>" + r("y=2") + "</m:e></m:eqArr>",
        "\\begin{array}{l}x=1 \\\\ y=2\\end{array}");
    cases.put("<m:groupChr><m:e>" + r("a+b") + "</m:e></m:groupChr>", "\\underbrace{a+b}");
    cases.put("<m:r><m:rPr><m:nor/></m:rPr><m:t>if</m:t></m:r>" + r("x≤1"), "\\text{if} x \\leq 1");
    cases.put("<m:phant><m:e>" + r("q") + "</m:e></m:phant><m:box><m:e>" + r("±1") + "</m:e></m:box>", "q \\pm 1");
    StringBuilder body = new StringBuilder();
    cases.keySet().forEach(k -> body.append(display(k)));
    List<DocItem> items = items(docx(body.toString()));
    assertThat(items).extracting(DocItem::label).containsOnly("formula");
    assertThat(items).extracting(DocItem::text).containsExactlyElementsOf(cases.values());
  }

  @Test
  @DisplayName("math inside a sentence stays in its text; a paragraph of math alone is a formula")
  void inlineMath() throws Exception {
    String inline = "<w:p><w:r><w:t xml:space=\"preserve\">The area is </w:t></w:r><m:oMath><m:sSup><m:e>"
        + r("r") + "</m:e><m:sup>" + r("2") + "</m:sup></m:sSup></m:oMath><w:r><w:t>.</w:t></w:r></w:p>";
    String alone = "<w:p><m:oMath>" + r("E=m") + "<m:sSup><m:e>" + r("c") + "</m:e><m:sup>" + r("2")
        + "</m:sup></m:sSup></m:oMath></w:p>";
    assertThat(items(docx(inline + alone))).extracting(DocItem::label, DocItem::text).containsExactly(
        org.assertj.core.groups.Tuple.tuple("text", "The area is r^{2} ."),
        org.assertj.core.groups.Tuple.tuple("formula", "E=mc^{2}"));
  }

  private static String txbx(String text) {
    return "<w:txbxContent>" + p(text) + "</w:txbxContent>";
  }

  @Test
  @DisplayName("text boxes, DrawingML and VML, follow their paragraph once; AlternateContent is read one branch")
  void textBoxes() throws Exception {
    String drawingMl = "<w:p><w:r><w:t>Anchor one</w:t></w:r><w:r><mc:AlternateContent><mc:Choice Requires=\"wps\">"
        + "<w:drawing><wp:anchor><a:graphic><a:graphicData><wps:wsp><wps:txbx>" + txbx("Inside the DrawingML box")
        + "</wps:txbx></wps:wsp></a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice><mc:Fallback><w:pict>"
        + "<v:shape><v:textbox>" + txbx("Inside the DrawingML box") + "</v:textbox></v:shape></w:pict>"
        + "</mc:Fallback></mc:AlternateContent></w:r></w:p>";
    String vml = "<w:p><w:r><w:pict><v:rect><v:textbox>" + txbx("Only in VML") + "</v:textbox></v:rect></w:pict></w:r></w:p>";
    String groupOfBoxes = "<w:p><w:r><w:drawing><wp:inline><a:graphic><a:graphicData><wps:wsp><wps:txbx>"
        + "<w:txbxContent>" + p("First box line") + "<w:tbl><w:tr><w:tc>" + p("cell a") + "</w:tc><w:tc>" + p("cell b")
        + "</w:tc></w:tr><w:tr><w:tc>" + p("1") + "</w:tc><w:tc>" + p("2") + "</w:tc></w:tr></w:tbl></w:txbxContent>"
        + "</wps:txbx></wps:wsp></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>";
    List<DocItem> items = items(docx(drawingMl + vml + p("After") + groupOfBoxes));
    assertThat(items).extracting(DocItem::text).containsExactly("Anchor one", "Inside the DrawingML box",
        "Only in VML", "After", "First box line", "| cell a | cell b |\n|---|---|\n| 1 | 2 |");
  }

  @Test
  @DisplayName("a table in a cell is its own table after its parent; a one-cell table is its content; rows in content controls stay rows")
  void tables() throws Exception {
    String inner = "<w:tbl><w:tr><w:tc>" + p("x") + "</w:tc><w:tc>" + p("y") + "</w:tc></w:tr><w:tr><w:tc>" + p("1")
        + "</w:tc><w:tc>" + p("2") + "</w:tc></w:tr></w:tbl>";
    String outer = "<w:tbl><w:tr><w:tc>" + p("Name") + "</w:tc><w:tc>" + p("Detail") + "</w:tc></w:tr><w:tr><w:tc>"
        + p("first") + "</w:tc><w:tc>" + p("see:") + inner + "</w:tc></w:tr></w:tbl>";
    String frame = "<w:tbl><w:tr><w:tc>" + p("Framed paragraph") + inner + "</w:tc></w:tr></w:tbl>";
    StringBuilder rows = new StringBuilder();
    for (int i = 0; i < 24; i++) {
      rows.append("<w:tr><w:tc>").append(p("item " + i)).append("</w:tc><w:tc>").append(p(String.valueOf(i * 10)))
          .append("</w:tc><w:tc>").append(p("note")).append("</w:tc></w:tr>");
    }
    String inControl = "<w:sdt><w:sdtPr/><w:sdtContent><w:tbl><w:sdt><w:sdtContent>" + rows
        + "</w:sdtContent></w:sdt></w:tbl></w:sdtContent></w:sdt>";
    List<DocItem> items = items(docx(outer + frame + inControl));
    assertThat(items).extracting(DocItem::label).containsExactly("table", "table", "text", "table", "table");
    assertThat(items.get(0).text()).isEqualTo("| Name | Detail |\n|---|---|\n| first | see: |");
    assertThat(items.get(1).text()).isEqualTo("| x | y |\n|---|---|\n| 1 | 2 |");
    assertThat(items.get(2).text()).isEqualTo("Framed paragraph");
    assertThat(ConversionReport.tableShape(items.get(4).text())).isEqualTo("24x3");
  }

  @Test
  @DisplayName("code-styled and monospace paragraphs are code items, consecutive lines joined")
  void code() throws Exception {
    String styled = "<w:p><w:pPr><w:pStyle w:val=\"Code\"/></w:pPr><w:r><w:t>def f(x):</w:t></w:r></w:p>"
        + "<w:p><w:pPr><w:pStyle w:val=\"Code\"/></w:pPr><w:r><w:t xml:space=\"preserve\">    return x</w:t></w:r></w:p>";
    String pre = "<w:p><w:pPr><w:pStyle w:val=\"HTMLPreformatted\"/></w:pPr><w:r><w:t>SELECT 1;</w:t></w:r></w:p>";
    String mono = "<w:p><w:r><w:rPr><w:rFonts w:ascii=\"Courier New\" w:hAnsi=\"Courier New\"/></w:rPr>"
        + "<w:t>ls -la</w:t></w:r></w:p>";
    List<DocItem> items = items(docx(styled + p("Prose between.") + pre + mono
        + "<w:p><w:pPr><w:pStyle w:val=\"Heading1\"/></w:pPr><w:r><w:rPr><w:rFonts w:ascii=\"Consolas\"/></w:rPr>"
        + "<w:t>Next</w:t></w:r></w:p>"));
    assertThat(items).extracting(DocItem::label, DocItem::text).containsExactly(
        org.assertj.core.groups.Tuple.tuple("code", "def f(x):\n    return x"),
        org.assertj.core.groups.Tuple.tuple("text", "Prose between."),
        org.assertj.core.groups.Tuple.tuple("code", "SELECT 1;\nls -la"),
        org.assertj.core.groups.Tuple.tuple("section_header", "Next"));
  }

  @Test
  @DisplayName("Strict Open XML reads as transitional: the same items")
  void strict() throws Exception {
    String body = "<w:p><w:pPr><w:pStyle w:val=\"Heading1\"/></w:pPr><w:r><w:t>Strict heading</w:t></w:r></w:p>"
        + p("Body text") + display("<m:f><m:num>" + r("1") + "</m:num><m:den>" + r("x") + "</m:den></m:f>");
    List<DocItem> strict = items(DocxFixture.strict(body));
    assertThat(strict).extracting(DocItem::label).containsExactly("section_header", "text", "formula");
    assertThat(strict).isEqualTo(items(docx(body)));
  }

  /** Bytes that deflate about {@code ratio}:1, like EMF drawings of mostly blank records. */
  private static byte[] compressible(int size, int ratio) {
    byte[] b = new byte[size];
    Random random = new Random(7);
    for (int i = 0; i < size; i += ratio) {
      b[i] = (byte) random.nextInt();
    }
    return b;
  }

  @Test
  @DisplayName("images that compress 40:1 and more are accepted; an XML part over 100:1 or a part past 64 MiB is a bomb")
  void bombGuard() throws Exception {
    byte[] image = compressible(8 << 20, 400);
    ByteArrayOutputStream probe = new ByteArrayOutputStream();
    try (DeflaterOutputStream d = new DeflaterOutputStream(probe, new Deflater(9))) {
      d.write(image);
    }
    assertThat((double) image.length / probe.size()).as("image compression ratio").isGreaterThan(40);
    byte[] withImages = docx(p("A report with two drawings."),
        Map.of("word/media/image1.emf", image, "word/media/image2.emf", compressible(8 << 20, 300)));
    assertThat(withImages.length).isLessThan(1 << 20);
    assertThat(items(withImages)).extracting(DocItem::text).containsExactly("A report with two drawings.");

    byte[] hugeImage = docx(p("x"), Map.of("word/media/image1.emf", new byte[65 << 20]));
    assertThatThrownBy(() -> items(hugeImage)).isInstanceOfSatisfying(IngestException.class,
        e -> assertThat(e.reason()).isEqualTo(IngestException.Reason.ARCHIVE_BOMB))
        .hasMessageContaining("word/media/image1.emf expands past");
    String padding = " ".repeat(4 << 20);
    byte[] xmlBomb = docx(p("x" + padding + "y"));
    assertThatThrownBy(() -> items(xmlBomb)).isInstanceOfSatisfying(IngestException.class,
        e -> assertThat(e.reason()).isEqualTo(IngestException.Reason.ARCHIVE_BOMB))
        .hasMessageContaining("XML part word/document.xml expands more than 100 times");
  }
}
