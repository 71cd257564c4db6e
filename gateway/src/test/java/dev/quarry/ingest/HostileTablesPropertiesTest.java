package dev.quarry.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.config.IngestSettings;
import dev.quarry.ingest.IngestException.Reason;
import dev.quarry.store.DocItem;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Generated hostile tables, each written as HTML, a docling grid, docling table cells, GFM and
 * DOCX: rows of cells with spans from 1 to 2^31-1 (most small, some absurd), padding before rows
 * (DOCX's gridBefore), empty rows, ragged widths, declared sizes, text repeated by spans; every
 * source at most 1 MB. Whatever the table, its conversion either succeeds with every table within
 * the per-table limit or is refused as too large or malformed, naming the file; never an
 * OutOfMemoryError, a stack overflow or another exception; and the converting thread allocates no
 * more than the file's allocation ceiling.
 */
@Label("Hostile tables in every format convert within their bounds or are refused, never an error")
class HostileTablesPropertiesTest {
  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
  private static final Set<Reason> REFUSALS = Set.of(Reason.TOO_LARGE, Reason.MALFORMED,
      Reason.NO_TEXT_EXTRACTED, Reason.EMPTY);

  private final Converters converters = new Converters(50L << 20);

  record Cell(long colspan, long rowspan, String text) {}

  record Row(long before, List<Cell> cells) {}

  record Table(List<Row> rows, long declaredRows, long declaredColumns) {}

  /** Mostly small, sometimes large, now and then absurd: what an attacker would send. */
  private static Arbitrary<Long> span() {
    return Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(12, Arbitraries.longs().between(1, 4)),
        net.jqwik.api.Tuple.of(3, Arbitraries.longs().between(5, 2_000)),
        net.jqwik.api.Tuple.of(2, Arbitraries.longs().between(2_001, 100_000)),
        net.jqwik.api.Tuple.of(1, Arbitraries.of(0L, 65_535L, 1_500_000_000L, (long) Integer.MAX_VALUE)));
  }

  @Provide
  Arbitrary<Table> tables() {
    Arbitrary<String> text = Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(6, Arbitraries.strings().alpha().ofMaxLength(8)),
        net.jqwik.api.Tuple.of(1, Arbitraries.strings().alpha().ofMinLength(500).ofMaxLength(5_000)));
    Arbitrary<Cell> cell = Combinators.combine(span(), span(), text).as(Cell::new);
    Arbitrary<Long> before = Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(8, Arbitraries.just(0L)), net.jqwik.api.Tuple.of(2, span()));
    Arbitrary<Row> row = Combinators.combine(before, cell.list().ofMaxSize(40)).as(Row::new);
    Arbitrary<List<Row>> rows = Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(4, row.list().ofMinSize(1).ofMaxSize(60)),
        net.jqwik.api.Tuple.of(1, row.list().ofMinSize(200).ofMaxSize(1_500)));
    return Combinators.combine(rows, span(), span()).as(Table::new);
  }

  @Property(tries = 30)
  void html(@ForAll("tables") Table table) {
    StringBuilder sb = new StringBuilder("<html><body><p>t</p><table>");
    for (Row r : table.rows()) {
      sb.append("<tr>");
      for (Cell c : r.cells()) {
        sb.append("<td colspan=").append(c.colspan()).append(" rowspan=").append(c.rowspan()).append('>')
            .append(c.text()).append("</td>");
      }
      sb.append("</tr>");
    }
    check("t.html", sb.append("</table></body></html>").toString());
  }

  @Property(tries = 30)
  void doclingGrid(@ForAll("tables") Table table) {
    StringBuilder grid = new StringBuilder("[");
    for (Row r : table.rows()) {
      grid.append(grid.length() > 1 ? "," : "").append('[');
      long written = 0;
      for (Cell c : r.cells()) {
        // A docling grid repeats a spanning cell in each slot: as many as fit in the source.
        for (long i = 0; i < Math.min(c.colspan(), 200) && written < 2_000; i++, written++) {
          grid.append(written > 0 ? "," : "").append("{\"text\":\"").append(c.text()).append("\"}");
        }
      }
      grid.append(']');
    }
    check("t.json", HostileFixtures.doclingTable("{\"grid\":" + grid.append(']') + "}"));
  }

  @Property(tries = 30)
  void doclingCells(@ForAll("tables") Table table) {
    StringBuilder cells = new StringBuilder();
    int r = 0;
    for (Row row : table.rows()) {
      long c = row.before();
      for (Cell cell : row.cells()) {
        cells.append(cells.isEmpty() ? "" : ",").append("{\"text\":\"").append(cell.text())
            .append("\",\"start_row_offset_idx\":").append(r).append(",\"end_row_offset_idx\":").append(r + cell.rowspan())
            .append(",\"start_col_offset_idx\":").append(c).append(",\"end_col_offset_idx\":").append(c + cell.colspan())
            .append('}');
        c += cell.colspan();
      }
      r++;
    }
    check("t.json", HostileFixtures.doclingTable("{\"num_rows\":" + table.declaredRows() + ",\"num_cols\":"
        + table.declaredColumns() + ",\"table_cells\":[" + cells + "]}"));
  }

  @Property(tries = 30)
  void gfm(@ForAll("tables") Table table) {
    long header = Math.min(table.declaredColumns(), 200_000);
    StringBuilder sb = new StringBuilder("|h".repeat((int) header)).append("|\n").append("|-".repeat((int) header))
        .append("|\n");
    for (Row r : table.rows()) {
      for (Cell c : r.cells()) {
        sb.append('|').append(c.text());
      }
      sb.append("|\n");
    }
    check("t.md", sb.toString());
  }

  @Property(tries = 30)
  void docx(@ForAll("tables") Table table) {
    StringBuilder t = new StringBuilder("<w:tbl>");
    for (Row r : table.rows()) {
      t.append("<w:tr>");
      if (r.before() > 0) {
        t.append("<w:trPr><w:gridBefore w:val=\"").append(r.before()).append("\"/></w:trPr>");
      }
      for (Cell c : r.cells()) {
        t.append("<w:tc><w:tcPr><w:gridSpan w:val=\"").append(c.colspan()).append("\"/>")
            .append(c.rowspan() > 1 ? "<w:vMerge w:val=\"restart\"/>" : c.rowspan() == 0 ? "<w:vMerge/>" : "")
            .append("</w:tcPr><w:p><w:r><w:t>").append(c.text()).append("</w:t></w:r></w:p></w:tc>");
      }
      t.append("</w:tr>");
    }
    byte[] docx = DocxFixture.docx(DocxFixture.p("t") + t.append("</w:tbl>"));
    check("t.docx", docx);
  }

  private void check(String name, String source) {
    check(name, source.getBytes(StandardCharsets.UTF_8));
  }

  private void check(String name, byte[] bytes) {
    if (bytes.length > 1 << 20) {
      return; // the class: sources of 1 MB or less
    }
    IngestBudget budget = IngestBudget.of(name, bytes.length, IngestSettings.DEFAULTS);
    long before = THREADS.getCurrentThreadAllocatedBytes();
    try {
      List<DocItem> items = converters.convertClean(converters.detect(name, null, bytes), name, bytes, budget)
          .document().items();
      for (DocItem it : items) {
        if (it.label().equals("table")) {
          String[] lines = it.text().split("\n");
          long columns = lines[0].chars().filter(ch -> ch == '|').count() - 1;
          assertThat((lines.length - 1) * columns).as("cells of a table item").isLessThanOrEqualTo(budget.tableCellLimit());
        }
      }
    } catch (IngestException e) {
      assertThat(e.reason()).as(e.getMessage()).isIn(REFUSALS);
      assertThat(e.getMessage()).startsWith(name + ": ");
    }
    long allocated = THREADS.getCurrentThreadAllocatedBytes() - before;
    long ceiling = Math.max(IngestBudget.FREE_ALLOCATION,
        (long) IngestSettings.DEFAULTS.allocationPerSourceByte() * bytes.length);
    assertThat(allocated).as(name + " of " + bytes.length + " bytes: allocated").isLessThanOrEqualTo(ceiling + (64L << 20));
  }
}
