package dev.quarry.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quarry.config.IngestSettings;
import dev.quarry.ingest.IngestException.Reason;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("TableGrid and IngestBudget: a grid is checked with its padding before it grows")
class TableGridTest {
  private static IngestBudget budget(long sourceBytes) {
    return IngestBudget.of("t.html", sourceBytes);
  }

  private static void tooLarge(Runnable growth, String... named) {
    assertThatThrownBy(growth::run)
        .isInstanceOfSatisfying(IngestBudget.Exceeded.class, e -> {
          assertThat(e.refusal().reason()).isEqualTo(Reason.TOO_LARGE);
          assertThat(e.refusal().getMessage()).startsWith("t.html: ").contains(named);
        });
  }

  @Test
  @DisplayName("renders the header, the separator, escaped pipes and rows padded to the widest, as before")
  void renders() {
    TableGrid grid = new TableGrid(budget(1000));
    grid.addRow(List.of("a", "b|c"));
    grid.addRow(List.of("1"));
    grid.addRow(List.of(" x\ny ", "2", "3"));
    assertThat(grid.markdown()).isEqualTo("| a | b\\|c |  |\n|---|---|---|\n| 1 |  |  |\n| x y | 2 | 3 |");
    assertThat(new TableGrid(budget(1000)).markdown()).isEmpty();
    assertThat(TableGrid.markdown(budget(1000), List.of(List.of(), List.of()))).isEmpty();
  }

  @Test
  @DisplayName("empty rows under a wide one count as cells: refused when the padded size passes the limit, before it grows")
  void paddingCounts() {
    TableGrid grid = new TableGrid(budget(1000));
    grid.append(grid.addRow(), "wide", 10_000);
    for (int r = 1; r < 10; r++) {
      grid.addRow();
    }
    tooLarge(grid::addRow, "11 rows by 10,000 columns", "110,000 cells", "the limit for one table is 100,000 cells");
    assertThat(grid.rowCount()).as("nothing was added past the limit").isEqualTo(10);
  }

  @Test
  @DisplayName("a span's whole rectangle, and padding before a row, are checked before one slot is written")
  void spansCheckedFirst() {
    TableGrid grid = new TableGrid(budget(1000));
    tooLarge(() -> grid.append(grid.addRow(), "", 1_500_000_000L), "1 rows by 1,500,000,000 columns");
    TableGrid spans = new TableGrid(budget(1000));
    tooLarge(() -> spans.ensure(65_535, 1_000), "65,535 rows by 1,000 columns");
    assertThat(spans.rowCount()).isZero();
  }

  @Test
  @DisplayName("spans written over each other are counted: a grid within its size cannot loop past its limit")
  void writesCount() {
    TableGrid grid = new TableGrid(budget(1000));
    grid.ensure(300, 300);
    tooLarge(() -> {
      for (int pass = 0; pass < 10; pass++) {
        for (int r = 0; r < 300; r++) {
          for (int c = 0; c < 300; c++) {
            grid.set(r, c, "x");
          }
        }
      }
    }, "300 rows by 300 columns");
  }

  @Test
  @DisplayName("the Markdown of a cell repeated by spans is sized before it is built")
  void markdownSized() {
    TableGrid grid = new TableGrid(budget(1000));
    String big = "y".repeat(10_000);
    int r = grid.addRow();
    grid.append(r, big, 100);
    assertThatThrownBy(grid::markdown).isInstanceOfSatisfying(IngestBudget.Exceeded.class,
        e -> assertThat(e.refusal().getMessage()).contains("a table's Markdown", "characters"));
  }

  @Test
  @DisplayName("all of a document's tables together are held to twice one table's limit")
  void documentCells() {
    IngestBudget b = budget(1000);
    tooLarge(() -> {
      for (int t = 0; t < 3; t++) {
        new TableGrid(b).ensure(1, 90_000);
      }
    }, "its tables have more than 200,000 cells in all");
  }

  @Test
  @DisplayName("the limits grow with the source, as ItemBounds' text does")
  void limitsScale() {
    assertThat(budget(1_000).tableCellLimit()).isEqualTo(IngestBudget.FREE_TABLE_CELLS);
    assertThat(budget(500_000).tableCellLimit()).isEqualTo(500_000);
    assertThat(budget(50_000_000).tableCellLimit()).isEqualTo(IngestBudget.MAX_TABLE_CELLS);
    IngestSettings d = IngestSettings.DEFAULTS;
    assertThat(IngestBudget.memoryFor(0, d)).isEqualTo(32L << 20);
    assertThat(IngestBudget.memoryFor(1L << 20, d)).isEqualTo(256L << 20);
    assertThat(IngestBudget.memoryFor(50L << 20, d)).isEqualTo(d.fileMemoryBytes());
  }

  @Test
  @DisplayName("memory past the file's share is refused naming the setting; nesting past 256 levels as malformed")
  void memoryAndNesting() {
    IngestBudget b = budget(1000);
    tooLarge(() -> b.memory(40L << 20, "a test's tree"), "a test's tree", "QUARRY_INGEST_FILE_MEMORY_MB",
        "the limit for a file of 1,000 bytes is 32 MiB");
    assertThat(b.tripped()).isNotNull();
    assertThatThrownBy(() -> budget(1).nesting(257, "lists in lists"))
        .isInstanceOfSatisfying(IngestBudget.Exceeded.class, e -> {
          assertThat(e.refusal().reason()).isEqualTo(Reason.MALFORMED);
          assertThat(e.refusal().getMessage()).contains("nested deeper than 256 levels (lists in lists)");
        });
  }
}
