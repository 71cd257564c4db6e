package dev.quarry.ingest;

import static dev.quarry.ingest.PdfFixture.MONO;
import static dev.quarry.ingest.PdfFixture.REGULAR;
import static dev.quarry.ingest.PdfFixture.labelled;
import static dev.quarry.ingest.PdfFixture.resourceItems;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.store.DocItem;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Code listings in PDFs: on pages drawn by real producers (Chromium printing HTML, groff; see
 * src/test/resources/pdf/README.md) and on exact pages written with PDFBox for the cases around
 * them (a fixed-pitch table, a typescript).
 */
class PdfCodeTest {
  @Test
  @DisplayName("Chromium: each listing is one code item with its lines, indentation and blank line")
  void chromiumListings() throws Exception {
    List<DocItem> items = resourceItems("listings-chromium.pdf");
    List<DocItem> code = labelled(items, "code");
    assertThat(code).hasSize(2);
    assertThat(code.get(0).text()).isEqualTo("""
        def load(path):
            settings = {}
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    line = line.strip()
                    if not line or line.startswith("#"):
                        continue
                    key, _, value = line.partition("=")
                    key, value = key.strip(), value.strip()
                    if key in settings:
                        raise ValueError(f"line {number}: {key} given twice")
                    settings[key] = value
            return settings""");
    assertThat(code.get(1).text()).startsWith("""
        SCHEMA = {"port": int, "debug": bool, "name": str}

        def convert(settings):
            out = {}
        """);
    // The prose around them stays prose, in reading order, and no listing line leaks into it.
    assertThat(items).extracting(DocItem::label).containsExactly("title", "text", "code", "text",
        "section_header", "code", "text");
    assertThat(labelled(items, "table")).isEmpty();
    assertThat(labelled(items, "text")).noneMatch(i -> i.text().contains("settings = {}"));
  }

  @Test
  @DisplayName("groff: trailing comments stay on their own lines, and a ruled table stays a table")
  void groffListing() throws Exception {
    List<DocItem> items = resourceItems("listing-groff.pdf");
    List<DocItem> code = labelled(items, "code");
    assertThat(code).hasSize(1);
    List<String> lines = code.get(0).text().lines().toList();
    assertThat(lines).hasSize(8);
    assertThat(lines.get(2)).matches("keep=7 +# days of logs kept");
    assertThat(lines.get(3)).matches("dir=/var/log/quarry +# where the service writes");
    // The two comments start in the same column, as they are drawn.
    assertThat(lines.get(2).indexOf('#')).isEqualTo(lines.get(3).indexOf('#'));
    assertThat(lines.get(5)).startsWith("    gzip -9");
    assertThat(labelled(items, "table")).singleElement()
        .satisfies(t -> assertThat(t.text()).contains("| Wednesday | 14 | 402 |"));
  }

  @Test
  @DisplayName("a table set in a fixed-pitch font is still a table, not code")
  void monospaceTable() throws Exception {
    try (PdfFixture pdf = new PdfFixture().page()) {
      pdf.lines(72, 90, REGULAR, 11, 14, "Shipments by quarter were as follows, in thousands of units.");
      String[][] rows = {{"Quarter", "2023", "2022"}, {"First", "1,204", "1,113"},
          {"Second", "1,388", "1,240"}, {"Third", "1,502", "1,319"}, {"Fourth", "1,610", "1,455"}};
      float y = 120;
      for (String[] r : rows) {
        pdf.text(72, y, MONO, 10, r[0]);
        pdf.rightAligned(300, y, MONO, 10, r[1]);
        pdf.rightAligned(380, y, MONO, 10, r[2]);
        y += 13;
      }
      List<DocItem> items = pdf.items();
      assertThat(labelled(items, "code")).isEmpty();
      assertThat(labelled(items, "table")).singleElement()
          .satisfies(t -> assertThat(t.text()).contains("Third", "1,502", "1,319"));
    }
  }

  @Test
  @DisplayName("a typescript (every line in a fixed-pitch font) is prose, not one long listing")
  void typescript() throws Exception {
    try (PdfFixture pdf = new PdfFixture().page()) {
      float y = pdf.lines(72, 90, MONO, 11, 14,
          "The committee met on the fourth of March and took the minutes of the",
          "previous meeting as read. The treasurer reported a balance in hand and",
          "the secretary read the letters received since the last meeting.");
      pdf.lines(72, y + 14, MONO, 11, 14,
          "It was agreed that the hall be booked for the summer fair, and that the",
          "secretary write to the council about the state of the footpath.");
      List<DocItem> items = pdf.items();
      assertThat(labelled(items, "code")).isEmpty();
      assertThat(labelled(items, "text")).hasSize(2);
    }
  }

  @Test
  @DisplayName("a lone fixed-pitch line is code only when it reads like code")
  void loneLines() throws Exception {
    try (PdfFixture pdf = new PdfFixture().page()) {
      float y = pdf.lines(72, 90, REGULAR, 11, 14,
          "Install the client first; the command below fetches it and its dependencies",
          "from the package index named in your configuration.");
      pdf.text(90, y + 8, MONO, 10, "pip install --index-url=$INDEX quarry-client");
      y = pdf.lines(72, y + 34, REGULAR, 11, 14,
          "Its reference manual is a separate document, named below, that ships with",
          "every release of the client.");
      pdf.text(90, y + 8, MONO, 10, "README");
      pdf.lines(72, y + 34, REGULAR, 11, 14,
          "Read it before you configure a second index.");
      List<DocItem> items = pdf.items();
      assertThat(labelled(items, "code")).extracting(DocItem::text)
          .containsExactly("pip install --index-url=$INDEX quarry-client");
      assertThat(items).anyMatch(i -> i.text().equals("README") && !i.label().equals("code"));
    }
  }

  @Test
  @DisplayName("list markers set in a fixed-pitch font (Word's \"o\" bullets) are not a listing")
  void monospaceMarkers() throws Exception {
    try (PdfFixture pdf = new PdfFixture().page()) {
      pdf.lines(72, 90, REGULAR, 11, 14, "The plan pays out in one of three ways, as the participant elected:");
      String[] choices = {"a lump sum in the March after separation from service;",
          "annual installments over five years, starting that March;",
          "annual installments over ten years, starting that March."};
      float y = 112;
      for (String c : choices) {
        pdf.text(90, y, MONO, 11, "o");
        pdf.text(105, y, REGULAR, 11, c);
        y += 16;
      }
      List<DocItem> items = pdf.items();
      assertThat(labelled(items, "code")).isEmpty();
      assertThat(items).extracting(DocItem::text).anyMatch(t -> t.contains("annual installments over ten years"));
    }
  }

  @Test
  @DisplayName("a listing drawn squeezed to nothing (Tz 0.01) stays small: gaps and indents are bounded")
  void squeezedListing() throws Exception {
    try (PdfFixture pdf = new PdfFixture().page()) {
      pdf.lines(72, 80, REGULAR, 11, 14, "The body of this page is prose, so its fixed-pitch rows are a listing.");
      for (int r = 0; r < 20; r++) {
        pdf.squeezed(72, 110 + 12 * r, MONO, 10, 0.01f, "x=f(y);", 380, 30);
      }
      List<DocItem> code = labelled(pdf.items(), "code");
      int chars = code.stream().mapToInt(i -> i.text().length()).sum();
      // 20 rows of 30 words: at most 200 spaces a gap, not 380 pt / 0.0006 pt per character.
      assertThat(chars).isLessThan(20 * 30 * (PdfCode.MAX_COLUMNS + 8));
    }
  }
}
