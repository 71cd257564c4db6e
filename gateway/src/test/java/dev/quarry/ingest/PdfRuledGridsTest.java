package dev.quarry.ingest;

import static dev.quarry.ingest.PdfFixture.REGULAR;
import static dev.quarry.ingest.PdfFixture.labelled;
import static dev.quarry.ingest.PdfFixture.resourceItems;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.store.DocItem;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Ruled grids that are not one table: a form whose rows are divided each their own way, and
 * boxed tables stacked a heading apart; and the tables that must stay tables beside them.
 */
class PdfRuledGridsTest {
  @Test
  @DisplayName("a form of boxes (Chromium): each field once, in order, not a table repeating them")
  void form() throws Exception {
    List<DocItem> items = resourceItems("form-chromium.pdf");
    assertThat(labelled(items, "table")).isEmpty();
    List<String> fields = items.stream().map(DocItem::text).filter(t -> t.matches("\\d+ .*")).toList();
    assertThat(fields).hasSize(21);
    assertThat(fields.get(0)).isEqualTo("1 Claimant's full name");
    assertThat(fields.get(9)).isEqualTo("10 Destination");
    assertThat(fields.get(20)).isEqualTo("21 Date");
    assertThat(items.get(items.size() - 1).text()).startsWith("Keep the receipts");
  }

  @Test
  @DisplayName("boxed tables a heading apart (Chromium) are two tables with the heading between")
  void stackedBoxes() throws Exception {
    List<DocItem> items = resourceItems("boxed-tables-chromium.pdf");
    List<String> labels = items.stream().map(DocItem::label).toList();
    assertThat(labels).containsSubsequence("section_header", "table", "section_header", "table",
        "section_header", "text", "table");
    assertThat(labelled(items, "table")).hasSize(3);
    assertThat(labelled(items, "table").get(0).text()).doesNotContain("Vehicle", "Make");
    assertThat(labelled(items, "table").get(1).text()).startsWith("| 10. Make | 11. Model |");
    assertThat(labelled(items, "section_header")).extracting(DocItem::text)
        .contains("Part 2. Vehicle");
  }

  @Test
  @DisplayName("one table drawn as two boxes with the same columns stays one table")
  void oneTableTwoBoxes() throws Exception {
    try (PdfFixture pdf = new PdfFixture().page()) {
      pdf.lines(72, 80, REGULAR, 11, 14, "Guidance for the full year, as updated in August:");
      float[] xs = {72, 260, 400, 540};
      box(pdf, xs, new float[] {100, 120, 140, 160});
      box(pdf, xs, new float[] {175, 195, 215});
      String[][] rows = {{"(in billions)", "August", "July"}, {"Sales", "$84.5", "$84.0"},
          {"Operational sales", "$83.9", "$83.5"}, {"Earnings per share", "$10.05", "$10.70"},
          {"Shares outstanding", "2,557", "2,630"}};
      float[] baselines = {114, 134, 154, 189, 209};
      for (int r = 0; r < rows.length; r++) {
        for (int c = 0; c < 3; c++) {
          pdf.text(xs[c] + 4, baselines[r], REGULAR, 10, rows[r][c]);
        }
      }
      List<DocItem> tables = labelled(pdf.items(), "table");
      assertThat(tables).singleElement().satisfies(t -> assertThat(t.text())
          .startsWith("| (in billions) | August | July |")
          .contains("| Shares outstanding | 2,557 | 2,630 |"));
    }
  }

  @Test
  @DisplayName("a ruled table of words with a header spanning two columns stays a table")
  void spanningHeader() throws Exception {
    try (PdfFixture pdf = new PdfFixture().page()) {
      float[] xs = {72, 220, 380, 540};
      float[] ys = {100, 120, 140, 160, 180};
      for (float y : ys) {
        pdf.rule(72, 540, y);
      }
      pdf.verticalRule(72, 100, 180).verticalRule(540, 100, 180).verticalRule(220, 100, 180)
          .verticalRule(380, 120, 180); // the header's second cell spans two columns
      pdf.text(76, 114, REGULAR, 10, "Role");
      pdf.text(224, 114, REGULAR, 10, "Responsibilities");
      String[][] rows = {{"Owner", "approves changes", "holds the keys"},
          {"Reviewer", "reads every change", "signs the release"},
          {"Author", "writes the change", "answers the review"}};
      for (int r = 0; r < rows.length; r++) {
        for (int c = 0; c < 3; c++) {
          pdf.text(xs[c] + 4, 134 + 20 * r, REGULAR, 10, rows[r][c]);
        }
      }
      List<DocItem> items = pdf.items();
      assertThat(labelled(items, "table")).singleElement().satisfies(t -> assertThat(t.text())
          .contains("| Reviewer | reads every change | signs the release |"));
    }
  }

  private static void box(PdfFixture pdf, float[] xs, float[] ys) throws Exception {
    for (float y : ys) {
      pdf.rule(xs[0], xs[xs.length - 1], y);
    }
    for (float x : xs) {
      pdf.verticalRule(x, ys[0], ys[ys.length - 1]);
    }
  }
}
