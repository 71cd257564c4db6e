package dev.quarry.ingest;

import dev.quarry.store.DocItem;

import static dev.quarry.ingest.PdfFixture.BOLD;
import static dev.quarry.ingest.PdfFixture.HEIGHT;
import static dev.quarry.ingest.PdfFixture.REGULAR;
import static dev.quarry.ingest.PdfFixture.SANS;
import static dev.quarry.ingest.PdfFixture.WIDTH;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.assertj.core.api.Assertions.within;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.util.List;
import org.apache.pdfbox.Loader;
import org.apache.pdfbox.pdmodel.PDDocument;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Layouts we have no docling reference for, written with PDFBox so that each case is exact. */
class PdfLayoutCasesTest {
  private final PdfConverter converter = new PdfConverter();

  private static final String[] BODY = {
      "Field samples are logged on the day they are taken, with the site, the depth",
      "and the weather noted beside each entry so that a later reader can trace every",
      "measurement back to the place and the conditions in which it was made."};

  private static final String[] MORE_BODY = {
      "Each core is photographed before it is split, and the photographs are kept with",
      "the log so that colour changes during drying can be told apart from real layers."};

  private ConvertedDocument convert(PdfFixture pdf) throws Exception {
    return converter.convert("fixture.pdf", pdf.bytes());
  }

  private static List<String> labels(ConvertedDocument doc) {
    return doc.items().stream().map(DocItem::label).toList();
  }

  @Test
  @DisplayName("single column: a title, headings of two sizes mapped to levels 1 and 2, body text")
  void headingSizes() throws Exception {
    try (PdfFixture pdf = new PdfFixture().page()) {
      pdf.text(72, 90, BOLD, 24, "Quarry Field Guide");
      pdf.text(72, 140, BOLD, 18, "1 Introduction");
      float y = pdf.lines(72, 165, REGULAR, 11, 14, BODY);
      pdf.text(72, y + 14, BOLD, 14, "1.1 Scope");
      y = pdf.lines(72, y + 36, REGULAR, 11, 14, MORE_BODY);
      pdf.text(72, y + 20, BOLD, 18, "2 Methods");
      y = pdf.lines(72, y + 45, REGULAR, 11, 14, BODY);
      pdf.text(72, y + 14, BOLD, 14, "2.1 Sampling");
      pdf.lines(72, y + 36, REGULAR, 11, 14, MORE_BODY);
      ConvertedDocument doc = convert(pdf);

      assertThat(doc.title()).isEqualTo("Quarry Field Guide");
      assertThat(doc.items()).extracting(DocItem::label, DocItem::headingLevel).containsExactly(
          tuple("title", 0), tuple("section_header", 1), tuple("text", 0),
          tuple("section_header", 2), tuple("text", 0), tuple("section_header", 1),
          tuple("text", 0), tuple("section_header", 2), tuple("text", 0));
      assertThat(doc.items().get(2).text()).isEqualTo(String.join(" ", BODY));
      assertThat(doc.items()).allSatisfy(i -> assertThat(i.pageNumbers()).containsExactly(1));
    }
  }

  @Test
  @DisplayName("headings in one size stay at level 1")
  void oneHeadingSize() throws Exception {
    try (PdfFixture pdf = new PdfFixture().page()) {
      pdf.text(72, 90, BOLD, 14, "Introduction");
      float y = pdf.lines(72, 115, REGULAR, 11, 14, BODY);
      pdf.text(72, y + 14, BOLD, 14, "Methods");
      pdf.lines(72, y + 39, REGULAR, 11, 14, MORE_BODY);
      ConvertedDocument doc = convert(pdf);

      assertThat(doc.items()).filteredOn(i -> i.label().equals("section_header"))
          .extracting(DocItem::text, DocItem::headingLevel)
          .containsExactly(tuple("Introduction", 1), tuple("Methods", 1));
    }
  }

  @Test
  @DisplayName("two columns: read column by column under a full-width title, a paragraph running"
      + " on into the next column joined")
  void twoColumns() throws Exception {
    try (PdfFixture pdf = new PdfFixture().page()) {
      pdf.text(150, 80, BOLD, 20, "Notes on Core Sampling Practice");
      pdf.text(72, 130, BOLD, 12, "Alpha Section");
      pdf.lines(72, 150, REGULAR, 10, 12.5f,
          "Alpha text begins here and explains how the",
          "drill is set up before the first core is cut",
          "from the ground at the marked site, checked",
          "twice by the second member of the crew, and");
      pdf.lines(320, 150, REGULAR, 10, 12.5f,
          "then logged in the notebook before the crew",
          "moves on to the next site of the survey.");
      pdf.text(320, 200, BOLD, 12, "Beta Section");
      pdf.lines(320, 220, REGULAR, 10, 12.5f,
          "Beta text covers the storage of the cores in",
          "labelled boxes that are kept dry and cool until",
          "they reach the laboratory for their analysis.");
      ConvertedDocument doc = convert(pdf);

      assertThat(doc.items()).extracting(DocItem::label).containsExactly(
          "title", "section_header", "text", "section_header", "text");
      assertThat(doc.items().get(1).text()).isEqualTo("Alpha Section");
      assertThat(doc.items().get(2).text()).startsWith("Alpha text begins")
          .contains("second member of the crew, and then logged in the notebook")
          .endsWith("next site of the survey.");
      assertThat(doc.items().get(3).text()).isEqualTo("Beta Section");
      assertThat(doc.items().get(4).text()).startsWith("Beta text covers");
    }
  }

  @Test
  @DisplayName("a table drawn without ruling lines, its text aligned in columns, becomes a"
      + " Markdown table with its caption")
  void unruledTable() throws Exception {
    try (PdfFixture pdf = new PdfFixture().page()) {
      float y = pdf.lines(72, 90, REGULAR, 11, 14, BODY);
      pdf.text(72, y + 10, REGULAR, 10, "Table 1. Properties of common metals.");
      String[][] rows = {
          {"Metal", "Density (g/cm3)", "Melting point (C)"},
          {"Aluminium", "2.70", "660"},
          {"Copper", "8.96", "1085"},
          {"Iron", "7.87", "1538"},
          {"Titanium", "4.51", "1668"}};
      float rowY = y + 32;
      for (String[] row : rows) {
        pdf.text(72, rowY, REGULAR, 10, row[0]);
        pdf.text(200, rowY, REGULAR, 10, row[1]);
        pdf.text(340, rowY, REGULAR, 10, row[2]);
        rowY += 14;
      }
      pdf.lines(72, rowY + 16, REGULAR, 11, 14, MORE_BODY);
      ConvertedDocument doc = convert(pdf);

      assertThat(labels(doc)).containsExactly("text", "table", "caption", "text");
      String table = doc.items().get(1).text();
      assertThat(ConversionReport.tableShape(table)).isEqualTo("5x3");
      assertThat(table).startsWith("| Metal | Density (g/cm3) | Melting point (C) |\n|---|---|---|")
          .contains("| Copper | 8.96 | 1085 |").endsWith("| Titanium | 4.51 | 1668 |");
      assertThat(doc.items().get(2).text()).isEqualTo("Table 1. Properties of common metals.");
    }
  }

  @Test
  @DisplayName("an unruled table whose description cell wraps onto a second line keeps one row"
      + " per record")
  void unruledTableWrappedCell() throws Exception {
    try (PdfFixture pdf = new PdfFixture().page()) {
      float y = pdf.lines(72, 90, REGULAR, 11, 14, BODY);
      String[][] rows = {
          {"Code", "Meaning", "Action"},
          {"E1", "Sensor offline", "Restart"},
          {"E2", "Battery below the", "Replace"},
          {"", "safe charge level", ""},
          {"E3", "Memory full", "Download"}};
      float rowY = y + 20;
      for (String[] row : rows) {
        for (int c = 0; c < 3; c++) {
          if (!row[c].isEmpty()) {
            pdf.text(72 + c * 130, rowY, REGULAR, 10, row[c]);
          }
        }
        rowY += 13;
      }
      ConvertedDocument doc = convert(pdf);

      assertThat(labels(doc)).containsExactly("text", "table");
      assertThat(doc.items().get(1).text()).isEqualTo("""
          | Code | Meaning | Action |
          |---|---|---|
          | E1 | Sensor offline | Restart |
          | E2 | Battery below the safe charge level | Replace |
          | E3 | Memory full | Download |""");
    }
  }

  @Test
  @DisplayName("two narrow columns of short prose lines are not taken for a table")
  void narrowColumnsAreNotATable() throws Exception {
    try (PdfFixture pdf = new PdfFixture().page()) {
      String[] left = {"The crew met at dawn", "and walked to the site", "with the drill and",
          "the boxes for cores."};
      String[] right = {"By noon the first hole", "was done and logged", "in the notebook by",
          "the youngest member."};
      pdf.lines(72, 100, REGULAR, 10, 12.5f, left);
      pdf.lines(200, 100, REGULAR, 10, 12.5f, right);
      ConvertedDocument doc = convert(pdf);

      assertThat(doc.items()).extracting(DocItem::label, DocItem::text).containsExactly(
          tuple("text", String.join(" ", left)), tuple("text", String.join(" ", right)));
    }
  }

  @Test
  @DisplayName("bulleted and numbered lists: one list_item per item, wrapped lines joined,"
      + " bullets dropped and numbers kept")
  void lists() throws Exception {
    try (PdfFixture pdf = new PdfFixture().page()) {
      pdf.text(72, 90, REGULAR, 11, "The kit holds the following items for each crew member:");
      String[] bullets = {"A field notebook with waterproof pages", "Two pencils",
          "A tape measure"};
      float y = 112;
      for (String b : bullets) {
        pdf.text(80, y, SANS, 11, "\u2022");
        pdf.text(94, y, REGULAR, 11, b);
        y += 15;
        if (b.startsWith("A field")) {
          pdf.text(94, y, REGULAR, 11, "and a spare cover in case of heavy rain");
          y += 15;
        }
      }
      pdf.text(72, y + 10, REGULAR, 11, "At each site the crew works through these steps:");
      y += 32;
      String[] steps = {"Mark the site on the map.", "Record the depth of the core.",
          "Photograph the core before splitting it."};
      for (int i = 0; i < steps.length; i++) {
        pdf.text(80, y, REGULAR, 11, (i + 1) + ".");
        pdf.text(94, y, REGULAR, 11, steps[i]);
        y += 15;
      }
      ConvertedDocument doc = convert(pdf);

      assertThat(doc.items()).extracting(DocItem::label, DocItem::text).containsExactly(
          tuple("text", "The kit holds the following items for each crew member:"),
          tuple("list_item",
              "A field notebook with waterproof pages and a spare cover in case of heavy rain"),
          tuple("list_item", "Two pencils"),
          tuple("list_item", "A tape measure"),
          tuple("text", "At each site the crew works through these steps:"),
          tuple("list_item", "1. Mark the site on the map."),
          tuple("list_item", "2. Record the depth of the core."),
          tuple("list_item", "3. Photograph the core before splitting it."));
      assertThat(doc.items()).filteredOn(i -> i.label().equals("list_item"))
          .allSatisfy(i -> assertThat(i.treeDepth()).isEqualTo(1));
    }
  }

  @Test
  @DisplayName("a running header and 'Page N of M' footers on every page are page furniture")
  void headersAndFooters() throws Exception {
    try (PdfFixture pdf = new PdfFixture()) {
      for (int p = 1; p <= 3; p++) {
        pdf.page();
        pdf.text(72, 40, SANS, 9, "Quarry Field Guide - Draft");
        pdf.lines(72, 100, REGULAR, 11, 14, p == 2 ? MORE_BODY : BODY);
        pdf.text(WIDTH / 2 - 25, HEIGHT - 30, SANS, 9, "Page " + p + " of 3");
      }
      ConvertedDocument doc = convert(pdf);

      assertThat(doc.items()).extracting(DocItem::label, DocItem::text, DocItem::pageNumbers)
          .containsExactly(
              tuple("page_header", "Quarry Field Guide - Draft", List.of(1)),
              tuple("text", String.join(" ", BODY), List.of(1)),
              tuple("page_footer", "Page 1 of 3", List.of(1)),
              tuple("page_header", "Quarry Field Guide - Draft", List.of(2)),
              tuple("text", String.join(" ", MORE_BODY), List.of(2)),
              tuple("page_footer", "Page 2 of 3", List.of(2)),
              tuple("page_header", "Quarry Field Guide - Draft", List.of(3)),
              tuple("text", String.join(" ", BODY), List.of(3)),
              tuple("page_footer", "Page 3 of 3", List.of(3)));
    }
  }

  @Test
  @DisplayName("text turned 90° in the margin comes out whole, apart from the body text")
  void rotatedText() throws Exception {
    try (PdfFixture pdf = new PdfFixture().page()) {
      pdf.rotatedText(36, 600, SANS, 12, "arXiv:2305.03393v1 [cs.CV] 5 May 2023");
      pdf.lines(72, 100, REGULAR, 11, 14, BODY);
      ConvertedDocument doc = convert(pdf);

      assertThat(doc.items()).extracting(DocItem::text).containsExactlyInAnyOrder(
          "arXiv:2305.03393v1 [cs.CV] 5 May 2023", String.join(" ", BODY));
      assertThat(doc.items()).allSatisfy(i -> assertThat(i.label()).isEqualTo("text"));
    }
  }

  @Test
  @DisplayName("a page turned by /Rotate, or whose content is drawn turned, reads like any"
      + " other: title, body text, table")
  void turnedPages() throws Exception {
    for (int[] variant : new int[][] {{90, 0}, {0, 90}, {90, 270}, {0, 180}}) {
      try (PdfFixture pdf = new PdfFixture().page().rotatePage(variant[0]).turn(variant[1])) {
        pdf.text(72, 100, BOLD, 16, "Landscape Results");
        float y = pdf.lines(72, 130, REGULAR, 11, 14, BODY);
        String[][] rows = {{"Site", "Depth"}, {"North", "12"}, {"South", "9"}, {"East", "14"}};
        for (String[] row : rows) {
          pdf.text(72, y + 10, REGULAR, 10, row[0]);
          pdf.text(250, y + 10, REGULAR, 10, row[1]);
          y += 13;
        }
        ConvertedDocument doc = convert(pdf);

        assertThat(labels(doc)).as("/Rotate %d, content turned %d", variant[0], variant[1])
            .containsExactly("title", "text", "table");
        assertThat(doc.items().get(1).text()).isEqualTo(String.join(" ", BODY));
        assertThat(doc.items().get(2).text()).contains("| South | 9 |");
      }
    }
  }

  @Test
  @DisplayName("an empty page between two pages of text yields no items and no failure")
  void emptyPage() throws Exception {
    try (PdfFixture pdf = new PdfFixture()) {
      pdf.page().lines(72, 100, REGULAR, 11, 14, BODY);
      pdf.page();
      pdf.page().lines(72, 100, REGULAR, 11, 14, MORE_BODY);
      ConvertedDocument doc = convert(pdf);

      assertThat(doc.items()).extracting(DocItem::label, DocItem::pageNumbers).containsExactly(
          tuple("text", List.of(1)), tuple("text", List.of(3)));
    }
    try (PdfFixture pdf = new PdfFixture().page()) {
      ConvertedDocument doc = convert(pdf);
      assertThat(doc.items()).isEmpty();
      assertThat(doc.title()).isEqualTo("fixture.pdf");
    }
  }

  @Test
  @DisplayName("a scanned page, only an image without text, becomes one picture item")
  void scannedPage() throws Exception {
    try (PdfFixture pdf = new PdfFixture().page()) {
      pdf.image(0, 0, WIDTH, HEIGHT);
      ConvertedDocument doc = convert(pdf);

      assertThat(doc.items()).extracting(DocItem::label, DocItem::selfRef, DocItem::pageNumbers)
          .containsExactly(tuple("picture", "#/pictures/0", List.of(1)));
    }
  }

  @Test
  @DisplayName("an image larger than its clipping path counts only as far as it shows")
  void clippedImageBounds() throws Exception {
    try (PdfFixture pdf = new PdfFixture().page()) {
      pdf.clippedImage(320, 100, 220, 150, 150, 60, 500, 300);
      try (PDDocument doc = Loader.loadPDF(pdf.bytes())) {
        PdfPageReader.Page page = PdfPageReader.read(doc, 0);
        assertThat(page.images()).singleElement().satisfies(box -> {
          assertThat(box.x0()).isCloseTo(320, within(0.5f));
          assertThat(box.top()).isCloseTo(100, within(0.5f));
          assertThat(box.x1()).isCloseTo(540, within(0.5f));
          assertThat(box.bottom()).isCloseTo(250, within(0.5f));
        });
      }
    }
  }

  @Test
  @DisplayName("a clipped figure in the right column leaves the left column's text and order"
      + " alone")
  void clippedFigureBesideText() throws Exception {
    try (PdfFixture pdf = new PdfFixture().page()) {
      pdf.text(72, 100, BOLD, 12, "Left Heading");
      pdf.lines(72, 120, REGULAR, 10, 12.5f,
          "The left column opens with a paragraph that is",
          "long enough to run over several lines of text,",
          "all of them beside the figure on the right side.");
      pdf.lines(72, 200, REGULAR, 10, 12.5f,
          "A second paragraph in the left column follows",
          "after a gap and must stay a paragraph of text.");
      pdf.clippedImage(320, 100, 220, 120, 150, 60, 500, 300);
      pdf.text(320, 235, REGULAR, 9, "Figure 1. A clipped figure.");
      pdf.lines(320, 260, REGULAR, 10, 12.5f,
          "The right column goes on below the figure with",
          "text that the picture must not take for itself.");
      ConvertedDocument doc = convert(pdf);

      assertThat(doc.items()).extracting(DocItem::label).containsExactly(
          "section_header", "text", "text", "picture", "caption", "text");
      assertThat(doc.items().get(1).text()).startsWith("The left column opens");
      assertThat(doc.items().get(2).text()).startsWith("A second paragraph");
      assertThat(doc.items().get(4).text()).isEqualTo("Figure 1. A clipped figure.");
      assertThat(doc.items().get(5).text()).startsWith("The right column goes on");
    }
  }

  @Test
  @DisplayName("a page tiled with thousands of small images is one picture, converted quickly")
  void tiledScan() throws Exception {
    try (PdfFixture pdf = new PdfFixture().page()) {
      pdf.tiles(12);
      byte[] bytes = pdf.bytes();
      ConvertedDocument doc = assertTimeoutPreemptively(Duration.ofSeconds(30),
          () -> converter.convert("tiles.pdf", bytes));
      assertThat(doc.items()).extracting(DocItem::label).containsExactly("picture");
    }
  }

  /** DejaVu Sans, from Debian's fonts-dejavu-core (on the machine image): it has Hebrew. */
  private static final java.nio.file.Path HEBREW_FONT =
      java.nio.file.Path.of("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf");

  /**
   * A right-to-left line as a PDF writer lays it out: words in reverse order, the letters of each
   * Hebrew word reversed, Latin words and numbers as they are.
   */
  private static String visual(String logical) {
    List<String> words = new java.util.ArrayList<>(List.of(logical.split(" ")));
    java.util.Collections.reverse(words);
    StringBuilder sb = new StringBuilder();
    for (String w : words) {
      boolean hebrew = w.chars().anyMatch(c -> c >= 0x0590 && c <= 0x05FF);
      sb.append(sb.isEmpty() ? "" : " ")
          .append(hebrew ? new StringBuilder(w).reverse().toString() : w);
    }
    return sb.toString();
  }

  @Test
  @DisplayName("right-to-left text drawn in visual order reads in logical order, Latin words and"
      + " numbers inside it kept as they are, and a paragraph's lines join at the right margin")
  void rightToLeft() throws Exception {
    try (PdfFixture pdf = new PdfFixture().page()) {
      org.apache.pdfbox.pdmodel.font.PDFont font = pdf.trueType(HEBREW_FONT);
      String heading = "דוח שנתי";
      String line1 = "בשנת 2024 עברה המערכת Quarry לגרסה חדשה";
      String line2 = "והיא קוראת עכשיו עברית";
      String line3 = "פסקה שנייה מתחילה כאן";
      pdf.rightAligned(540, 90, font, 16, visual(heading));
      pdf.rightAligned(540, 120, font, 11, visual(line1));
      pdf.rightAligned(540, 135, font, 11, visual(line2));
      pdf.rightAligned(525, 160, font, 11, visual(line3)); // indented at the right: a new paragraph
      ConvertedDocument doc = convert(pdf);

      assertThat(doc.items()).extracting(DocItem::text)
          .containsExactly(heading, line1 + " " + line2, line3);
      assertThat(doc.items().get(0).label()).isIn("title", "section_header");
    }
  }

  @Test
  @DisplayName("paragraphs set with wide leading (170% of the size) are joined line by line,"
      + " each first-line indent starting the next one")
  void wideLeading() throws Exception {
    try (PdfFixture pdf = new PdfFixture().page()) {
      float y = pdf.lines(72, 100, REGULAR, 11, 18.7f, BODY);
      pdf.lines(86, y, REGULAR, 11, 18.7f, MORE_BODY);
      ConvertedDocument doc = convert(pdf);

      assertThat(doc.items()).extracting(DocItem::text).containsExactly(
          String.join(" ", BODY), String.join(" ", MORE_BODY));
    }
  }

  @Test
  @DisplayName("two runs drawn over each other on one baseline stay two lines, never mixed letter"
      + " by letter; two small lines stacked beside a large heading stay apart")
  void overlappingRuns() throws Exception {
    try (PdfFixture pdf = new PdfFixture().page()) {
      pdf.text(72, 100, SANS, 9, "Published by the Survey Office");
      pdf.text(76, 100, SANS, 9, "Issued quarterly since 1998");
      pdf.text(72, 134, SANS, 9, "Publisher Office");
      pdf.text(72, 150, SANS, 9, "Editor Kim");
      pdf.text(400, 142, BOLD, 26, "Issues");
      ConvertedDocument doc = convert(pdf);

      List<String> texts = doc.items().stream().map(DocItem::text).toList();
      String all = String.join(" | ", texts);
      assertThat(all).contains("Published by the Survey Office", "Issued quarterly since 1998",
          "Publisher Office", "Editor Kim", "Issues");
    }
  }

  @Test
  @DisplayName("footnotes, smaller and marked at the foot of the page, are labelled footnote; a"
      + " marked note above the body text is not")
  void footnotes() throws Exception {
    try (PdfFixture pdf = new PdfFixture().page()) {
      pdf.lines(72, 100, REGULAR, 11, 14, BODY);
      pdf.lines(72, 160, REGULAR, 11, 14, MORE_BODY);
      pdf.rule(72, 200, 690);
      pdf.text(72, 705, REGULAR, 8, "1) The depth is measured from the surface of the water.");
      pdf.text(72, 716, REGULAR, 8, "2) Cores shorter than 10 cm are logged but not split,");
      pdf.text(80, 726, REGULAR, 8, "because they break apart when dried.");
      ConvertedDocument doc = convert(pdf);

      assertThat(doc.items()).extracting(DocItem::label, DocItem::text).containsExactly(
          tuple("text", String.join(" ", BODY)),
          tuple("text", String.join(" ", MORE_BODY)),
          tuple("footnote", "1) The depth is measured from the surface of the water."),
          tuple("footnote", "2) Cores shorter than 10 cm are logged but not split, because they"
              + " break apart when dried."));
    }
  }

  @Test
  @DisplayName("numbered section headers in a heading font are section_header items leveled by"
      + " their numbering's depth; a numbered list in the body font stays a list")
  void numberedHeaders() throws Exception {
    try (PdfFixture pdf = new PdfFixture().page()) {
      pdf.text(72, 90, BOLD, 12, "1. Introduction");
      pdf.lines(72, 110, REGULAR, 11, 14, BODY);
      pdf.text(72, 165, BOLD, 11, "1.1 Scope of the survey");
      pdf.lines(72, 185, REGULAR, 11, 14, MORE_BODY);
      pdf.text(72, 225, BOLD, 11, "(2) Sampling");
      pdf.text(72, 250, REGULAR, 11, "1. Mark the site on the map.");
      pdf.text(72, 265, REGULAR, 11, "2. Record the depth of the core.");
      ConvertedDocument doc = convert(pdf);

      assertThat(doc.items()).extracting(DocItem::label, DocItem::text, DocItem::headingLevel)
          .containsExactly(
              tuple("section_header", "1. Introduction", 1),
              tuple("text", String.join(" ", BODY), 0),
              tuple("section_header", "1.1 Scope of the survey", 2),
              tuple("text", String.join(" ", MORE_BODY), 0),
              tuple("section_header", "(2) Sampling", 1),
              tuple("list_item", "1. Mark the site on the map.", 0),
              tuple("list_item", "2. Record the depth of the core.", 0));
    }
  }

  @Test
  @DisplayName("glyphs mapped to control or private-use characters are dropped, ligatures and"
      + " Arabic presentation forms become letters")
  void undecodableGlyphs() {
    assertThat(PdfText.decoded("\u0001")).isNull();
    assertThat(PdfText.decoded("\uE012")).isNull();
    assertThat(PdfText.decoded("\uFFFD")).isNull();
    assertThat(PdfText.decoded("a")).isEqualTo("a");
    assertThat(PdfText.decoded("\uFB01")).isEqualTo("fi");
    assertThat(PdfText.decoded("\uFEFB")).isEqualTo("\u0644\u0627");
    assertThat(PdfText.joinsWithoutSpace('\u6587', '\u5B57')).isTrue();
    assertThat(PdfText.joinsWithoutSpace('\uD55C', '\uAE00')).isFalse();
  }

  @Test
  @DisplayName("a table framed by horizontal rules with one vertical rule dividing its columns"
      + " takes its cells from the rules: a cell of two lines stays one cell")
  void horizontalRulesAndOneColumnRule() throws Exception {
    try (PdfFixture pdf = new PdfFixture().page()) {
      pdf.lines(72, 90, REGULAR, 11, 14, BODY);
      float[] rules = {140, 160, 195, 230};
      for (float y : rules) {
        pdf.rule(72, 400, y);
      }
      pdf.verticalRule(160, 140, 230);
      pdf.text(76, 154, BOLD, 10, "Kind");
      pdf.text(164, 154, BOLD, 10, "Rule");
      pdf.text(76, 174, REGULAR, 10, "Cores");
      pdf.text(164, 174, REGULAR, 10, "Photographed before they are split,");
      pdf.text(164, 188, REGULAR, 10, "then logged with the site and depth.");
      pdf.text(76, 209, REGULAR, 10, "Water");
      pdf.text(164, 209, REGULAR, 10, "Sampled at three depths,");
      pdf.text(164, 223, REGULAR, 10, "each bottle labelled on the spot.");
      ConvertedDocument doc = convert(pdf);

      DocItem table = doc.items().stream().filter(i -> i.label().equals("table")).findFirst()
          .orElseThrow();
      assertThat(PdfStatementsTest.cells(table.text())).containsExactly(
          List.of("Kind", "Rule"),
          List.of("Cores", "Photographed before they are split, then logged with the site and depth."),
          List.of("Water", "Sampled at three depths, each bottle labelled on the spot."));
    }
  }

  @Test
  @DisplayName("a bulleted list whose bullets stand far from their text is a list, not a table of"
      + " bullets and texts")
  void widelySetBulletsAreAList() throws Exception {
    try (PdfFixture pdf = new PdfFixture().page()) {
      pdf.lines(72, 90, REGULAR, 11, 14, BODY);
      String[] points = {"Cores are photographed before they are split", "Water is sampled at three"
          + " depths", "Every bottle is labelled on the spot", "The log is copied each evening"};
      float y = 150;
      for (String point : points) {
        pdf.text(80, y, REGULAR, 11, "•");
        pdf.text(116, y, REGULAR, 11, point);
        y += 16;
      }
      pdf.lines(72, y + 20, REGULAR, 11, 14, MORE_BODY);
      ConvertedDocument doc = convert(pdf);

      assertThat(labels(doc)).doesNotContain("table");
      assertThat(doc.items()).filteredOn(i -> i.label().equals("list_item"))
          .extracting(DocItem::text).containsExactly(points);
    }
  }
}
