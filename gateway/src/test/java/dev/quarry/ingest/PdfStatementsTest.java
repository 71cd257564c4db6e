package dev.quarry.ingest;

import dev.quarry.store.DocItem;
import static dev.quarry.ingest.PdfFixture.BOLD;
import static dev.quarry.ingest.PdfFixture.REGULAR;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.support.SharedData;
import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import org.apache.pdfbox.Loader;
import org.apache.pdfbox.pdmodel.PDDocument;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Financial statements: one table per statement, a header row with the periods, one row per line
 * item, a column per period. The filings' expected cells were read off the PDFs with poppler's
 * {@code pdftotext -layout}, not with PDFBox.
 */
class PdfStatementsTest {
  private final PdfConverter converter = new PdfConverter();

  /** Pages {@code first}..{@code last} (1-based) of a filing, as a PDF of their own. */
  private ConvertedDocument filingPages(String name, int first, int last) throws Exception {
    byte[] whole = Files.readAllBytes(SharedData.path("filings/pdfs/" + name + ".pdf"));
    try (PDDocument doc = Loader.loadPDF(whole)) {
      doc.setAllSecurityToBeRemoved(true); // some filings carry an empty-password encryption
      for (int p = doc.getNumberOfPages(); p >= 1; p--) {
        if (p < first || p > last) {
          doc.removePage(p - 1);
        }
      }
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      doc.save(out);
      return converter.convert(name + ".pdf", out.toByteArray());
    }
  }

  private static List<List<List<String>>> tables(ConvertedDocument doc) {
    List<List<List<String>>> out = new ArrayList<>();
    for (DocItem i : doc.items()) {
      if (i.label().equals("table")) {
        out.add(cells(i.text()));
      }
    }
    return out;
  }

  /** A Markdown table's cells, row by row (the separator line left out). */
  static List<List<String>> cells(String markdown) {
    List<List<String>> rows = new ArrayList<>();
    String[] lines = markdown.split("\n");
    for (int r = 0; r < lines.length; r++) {
      if (r == 1) {
        continue;
      }
      String line = lines[r].strip();
      String[] parts = line.substring(1, line.length() - 1).split("(?<!\\\\)\\|", -1);
      List<String> row = new ArrayList<>();
      for (String p : parts) {
        row.add(p.strip());
      }
      rows.add(row);
    }
    return rows;
  }

  /** The figures of the row whose label is {@code label}. */
  private static List<String> row(List<List<String>> table, String label) {
    for (List<String> r : table) {
      if (r.get(0).equals(label)) {
        return r.subList(1, r.size());
      }
    }
    throw new AssertionError("no row '" + label + "' in " + table);
  }

  @Test
  @DisplayName("Adobe 10-K, consolidated statements of cash flows (p. 57): one table, the three"
      + " fiscal years as column headers, $ signs and brackets in the figure's cell")
  void adobeCashFlows() throws Exception {
    ConvertedDocument doc = filingPages("ADOBE_2022_10K", 57, 57);
    List<List<List<String>>> tables = tables(doc);
    assertThat(tables).hasSize(1);
    List<List<String>> t = tables.get(0);
    assertThat(t.get(0)).hasSize(4);
    assertThat(t.get(0).get(1)).contains("December 2,", "2022");
    assertThat(t.get(0).get(2)).contains("December 3,", "2021");
    assertThat(t.get(0).get(3)).contains("November 27,", "2020");
    assertThat(row(t, "Net income")).containsExactly("$ 4,756", "$ 4,822", "$ 5,260");
    assertThat(row(t, "Deferred income taxes")).containsExactly("328", "183", "(1,501)");
    assertThat(row(t, "Changes in operating assets and liabilities, net of acquired assets and"
        + " assumed liabilities:")).containsExactly("", "", "");
    assertThat(row(t, "Acquisitions, net of cash acquired")).containsExactly("(126)", "(2,682)", "—");
    assertThat(row(t, "Net cash used for financing activities"))
        .containsExactly("(6,825)", "(4,301)", "(3,488)");
    assertThat(row(t, "Cash and cash equivalents at end of year"))
        .containsExactly("$ 4,236", "$ 3,844", "$ 4,478");
    assertThat(row(t, "Cash paid for interest")).containsExactly("$ 103", "$ 100", "$ 88");
    // The periods are the table's header, not headings of their own.
    assertThat(doc.items()).filteredOn(i -> i.label().equals("section_header"))
        .extracting(DocItem::text).doesNotContain("2022", "2021", "2020");
  }

  @Test
  @DisplayName("Boeing 10-K, consolidated statements of operations (p. 55): bracketed losses, an"
      + " unlabelled subtotal row, the years as the header")
  void boeingOperations() throws Exception {
    List<List<List<String>>> tables = tables(filingPages("BOEING_2022_10K", 55, 55));
    assertThat(tables).hasSize(1);
    List<List<String>> t = tables.get(0);
    assertThat(t.get(0)).containsExactly("Years ended December 31,", "2022", "2021", "2020");
    assertThat(row(t, "Sales of products")).containsExactly("$55,893", "$51,386", "$47,142");
    assertThat(row(t, "Cost of products")).containsExactly("(53,969)", "(49,954)", "(54,568)");
    assertThat(row(t, "")).containsExactly("3,502", "3,017", "(5,685)");
    assertThat(row(t, "Gain on dispositions, net")).containsExactly("6", "277", "202");
    assertThat(row(t, "Net loss")).containsExactly("(5,053)", "(4,290)", "(11,941)");
    assertThat(row(t, "Diluted loss per share")).containsExactly("($8.30)", "($7.15)", "($20.88)");
  }

  @Test
  @DisplayName("Verizon 10-K, consolidated balance sheets (p. 56): indented sub-items as rows, a"
      + " label wrapped over two lines one row, nil figures as dashes")
  void verizonBalanceSheet() throws Exception {
    List<List<List<String>>> tables = tables(filingPages("VERIZON_2022_10K", 56, 56));
    assertThat(tables).hasSize(1);
    List<List<String>> t = tables.get(0);
    assertThat(t.get(0)).containsExactly("At December 31,", "2022", "2021");
    assertThat(row(t, "Cash and cash equivalents")).containsExactly("$ 2,605", "$ 2,921");
    assertThat(row(t, "Less Allowance for credit losses")).containsExactly("826", "896");
    assertThat(row(t, "Accounts receivable, net")).containsExactly("24,506", "23,846");
    assertThat(row(t, "Series preferred stock ($0.10 par value; 250,000,000 shares authorized;"
        + " none issued)")).containsExactly("—", "—");
    assertThat(row(t, "Common stock ($0.10 par value; 6,250,000,000 shares authorized in each"
        + " period; 4,291,433,646 shares issued in each period)")).containsExactly("429", "429");
    assertThat(row(t, "Accumulated other comprehensive loss")).containsExactly("(1,865)", "(927)");
    assertThat(row(t, "Total liabilities and equity")).containsExactly("$ 379,680", "$ 366,596");
  }

  @Test
  @DisplayName("PepsiCo 10-K, consolidated statement of cash flows over two pages (pp. 64-65):"
      + " one table listing both pages, its period header once, the repeated title dropped")
  void pepsicoCashFlowsAcrossPages() throws Exception {
    ConvertedDocument doc = filingPages("PEPSICO_2022_10K", 64, 65);
    List<DocItem> tableItems = doc.items().stream().filter(i -> i.label().equals("table")).toList();
    assertThat(tableItems).hasSize(1);
    assertThat(tableItems.get(0).pageNumbers()).containsExactly(1, 2);
    List<List<String>> t = cells(tableItems.get(0).text());
    assertThat(t.get(0)).containsExactly("", "2022", "2021", "2020");
    assertThat(t.subList(1, t.size())).noneMatch(r -> r.equals(t.get(0)));
    assertThat(row(t, "Capital spending")).containsExactly("(5,207)", "(4,625)", "(4,240)");
    assertThat(row(t, "Net Cash Used for Investing Activities"))
        .containsExactly("(2,430)", "(3,269)", "(11,619)");
    assertThat(row(t, "Cash dividends paid")).containsExactly("(6,172)", "(5,815)", "(5,509)");
    assertThat(row(t, "Cash and Cash Equivalents and Restricted Cash, End of Year"))
        .containsExactly("$ 5,100", "$ 5,707", "$ 8,254");
    // The second page's "(continued)" title is no section of its own.
    assertThat(doc.items()).filteredOn(i -> i.label().equals("section_header"))
        .extracting(DocItem::text).containsExactly("Consolidated Statement of Cash Flows");
    // What follows the table stays, in order: furniture and the closing note.
    assertThat(doc.items()).extracting(DocItem::text)
        .contains("See accompanying notes to the consolidated financial statements.");
    for (int i = 0; i < doc.items().size(); i++) {
      assertThat(doc.items().get(i).position()).isEqualTo(i);
    }
    assertThat(doc.items()).filteredOn(i -> i.selfRef().startsWith("#/texts/"))
        .extracting(DocItem::selfRef).doesNotHaveDuplicates();
  }

  @Test
  @DisplayName("Boeing 10-K, consolidated statements of comprehensive income (p. 56): labels of 20"
      + " words and more that wrap, a wrapped label ending in a bracketed figure, one table")
  void boeingComprehensiveIncome() throws Exception {
    List<List<List<String>>> tables = tables(filingPages("BOEING_2022_10K", 56, 56));
    assertThat(tables).hasSize(1);
    List<List<String>> t = tables.get(0);
    // Every cell as `pdftotext -layout -f 56 -l 56` shows the page.
    assertThat(t).containsExactly(
        List.of("Years ended December 31,", "2022", "2021", "2020"),
        List.of("Net loss", "($5,053)", "($4,290)", "($11,941)"),
        List.of("Other comprehensive income/(loss), net of tax:", "", "", ""),
        List.of("Currency translation adjustments", "(62)", "(75)", "98"),
        List.of("Unrealized loss on certain investments, net of tax of $0, $0 and $0", "(1)", "",
            ""),
        List.of("Derivative instruments:", "", "", ""),
        List.of("Unrealized (loss)/gain arising during period, net of tax of $12, ($16) and ($4)",
            "(40)", "55", "14"),
        List.of("Reclassification adjustment for loss/(gain) included in net earnings, net of tax"
            + " of ($3), $2 and ($7)", "10", "(6)", "27"),
        List.of("Total unrealized (loss)/gain on derivative instruments, net of tax", "(30)", "49",
            "41"),
        List.of("Defined benefit pension plans & other postretirement benefits:", "", "", ""),
        List.of("Net actuarial gain/(loss) arising during the period, net of tax of ($22), ($32)"
            + " and $111", "1,533", "4,262", "(1,956)"),
        List.of("Amortization of actuarial loss included in net periodic pension cost, net of tax"
            + " of ($11), ($8) and ($52)", "791", "1,155", "917"),
        List.of("Settlements included in net (loss)/income, net of tax of $0, ($2) and $0", "(4)",
            "191", "5"),
        List.of("Amortization of prior service credits included in net periodic pension cost, net"
            + " of tax of $2, $1 and $6", "(114)", "(114)", "(112)"),
        List.of("Prior service (credit)/cost arising during the period, net of tax of $0, $0 and"
            + " ($2)", "(1)", "", "27"),
        List.of("Pension and postretirement (cost)/benefit related to our equity method"
            + " investments, net of tax of $0, ($2) and $0", "(3)", "6", ""),
        List.of("Total defined benefit pension plans & other postretirement benefits, net of tax",
            "2,202", "5,500", "(1,119)"),
        List.of("Other comprehensive income/(loss), net of tax", "2,109", "5,474", "(980)"),
        List.of("Comprehensive (loss)/income, net of tax", "(2,944)", "1,184", "(12,921)"),
        List.of("Less: Comprehensive loss related to noncontrolling interest", "(118)", "(88)",
            "(68)"),
        List.of("Comprehensive (loss)/income attributable to Boeing Shareholders, net of tax",
            "($2,826)", "$1,272", "($12,853)"));
  }

  @Test
  @DisplayName("Verizon 10-K, consolidated statements of income (p. 54): the years set in the top"
      + " margin are the table's header, not running page headers")
  void verizonIncomeYearsInTheMargin() throws Exception {
    ConvertedDocument doc = filingPages("VERIZON_2022_10K", 53, 55);
    assertThat(doc.items()).filteredOn(i -> i.label().equals("page_header"))
        .extracting(DocItem::text).doesNotContain("2022", "2021", "2020");
    List<List<List<String>>> onIncomePage = new ArrayList<>();
    for (DocItem i : doc.items()) {
      if (i.label().equals("table") && i.pageNumbers().equals(List.of(2))) {
        onIncomePage.add(cells(i.text()));
      }
    }
    assertThat(onIncomePage).hasSize(1);
    List<List<String>> t = onIncomePage.get(0);
    assertThat(t.get(0).get(0)).isEqualTo("Years Ended December 31,");
    assertThat(t.get(0).subList(1, 4)).satisfiesExactly(
        c -> assertThat(c).endsWith("2022"), c -> assertThat(c).endsWith("2021"),
        c -> assertThat(c).endsWith("2020"));
    assertThat(row(t, "Service revenues and other"))
        .containsExactly("$ 109,625", "$ 110,449", "$ 109,872");
  }

  @Test
  @DisplayName("a statement drawn with PDFBox: header spanning the periods, $ at the column's left"
      + " edge, a wrapped label, total rules, nothing else on the page taken into the table")
  void syntheticStatement() throws Exception {
    try (PdfFixture pdf = new PdfFixture().page()) {
      pdf.text(200, 80, BOLD, 11, "CONSOLIDATED STATEMENTS OF INCOME");
      pdf.text(250, 95, REGULAR, 9, "(In millions)");
      pdf.text(405, 115, REGULAR, 8, "Years Ended December 31,");
      pdf.rightAligned(440, 127, REGULAR, 8, "2023");
      pdf.rightAligned(530, 127, REGULAR, 8, "2022");
      String[][] rows = {
          {"Revenue:", null, null},
          {"  Product", "$|1,234", "$|1,100"},
          {"  Services", "56", "(12)"},
          {"Total revenue", "1,290", "1,088"},
          {"Cost of revenue, including amortization of acquired", null, null},
          {"  intangibles", "(310)", "(295)"},
          {"Net income (loss)", "$|980", "$|—"}};
      float y = 142;
      for (String[] r : rows) {
        pdf.text(r[0].startsWith(" ") ? 80 : 72, y, REGULAR, 9, r[0].strip());
        for (int c = 1; c <= 2; c++) {
          if (r[c] == null) {
            continue;
          }
          float right = c == 1 ? 440 : 530;
          String figure = r[c];
          if (figure.startsWith("$|")) {
            pdf.text(right - 55, y, REGULAR, 9, "$");
            figure = figure.substring(2);
          }
          pdf.rightAligned(right, y, REGULAR, 9, figure);
        }
        if (r[0].startsWith("Total")) {
          pdf.rule(400, 440, y + 3);
          pdf.rule(490, 530, y + 3);
        }
        y += 12;
      }
      pdf.lines(72, y + 30, REGULAR, 9, 12,
          "See the accompanying notes, which are an integral part of these statements, for the",
          "policies applied in 2023 and 2022 and the figures restated in 2021.");
      ConvertedDocument doc = converter.convert("statement.pdf", pdf.bytes());

      List<List<List<String>>> tables = tables(doc);
      assertThat(tables).hasSize(1);
      assertThat(tables.get(0)).containsExactly(
          List.of("", "Years Ended December 31, 2023", "Years Ended December 31, 2022"),
          List.of("Revenue:", "", ""),
          List.of("Product", "$ 1,234", "$ 1,100"),
          List.of("Services", "56", "(12)"),
          List.of("Total revenue", "1,290", "1,088"),
          List.of("Cost of revenue, including amortization of acquired intangibles", "(310)",
              "(295)"),
          List.of("Net income (loss)", "$ 980", "$ —"));
      assertThat(doc.items()).extracting(DocItem::text).anyMatch(t -> t.startsWith("See the"
          + " accompanying notes") && t.endsWith("restated in 2021."));
    }
  }
}
