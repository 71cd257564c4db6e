package dev.quarry.ingest;

import dev.quarry.store.DocItem;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("ConversionReport")
class ConversionReportTest {
  private static DocItem item(int position, String label, String text, int level, List<Integer> pages) {
    return new DocItem(position, "#/texts/" + position, label, text, pages, level, 0);
  }

  private static final List<DocItem> REFERENCE = List.of(
      item(0, "section_header", "Intro to ducks", 1, List.of(1)),
      item(1, "text", "Ducks swim and quack loudly", 0, List.of(1)),
      item(2, "table", "| a | b |\n|---|---|\n| 1 | 2 |", 0, List.of(2)),
      item(3, "list_item", "Mallards are common", 0, List.of(2)));

  @Test
  @DisplayName("scores a perfect copy 1.0 everywhere")
  void identical() {
    ConversionReport r = ConversionReport.compare("same", REFERENCE, REFERENCE);
    assertThat(List.of(r.tokenRecall(), r.tokenPrecision(), r.alignment(), r.labelAgreement(),
        r.pageAgreement(), r.headingLevelAgreement())).containsOnly(1.0);
    assertThat(r.tablesAgree()).isTrue();
  }

  @Test
  @DisplayName("sees missing words, extra words, wrong labels, pages, levels and table shapes")
  void differences() {
    List<DocItem> actual = List.of(
        item(0, "section_header", "Intro to ducks", 2, List.of(1)),
        item(1, "paragraph", "Ducks swim and quack loudly", 0, List.of(3)),
        item(2, "table", "| a | b | c |\n|---|---|---|\n| 1 | 2 | 3 |", 0, List.of(2)),
        item(3, "text", "Mallards are common geese", 0, List.of(2)));
    ConversionReport r = ConversionReport.compare("diff", actual, REFERENCE);
    assertThat(r.tokenRecall()).isEqualTo(1.0);
    assertThat(r.tokenPrecision()).isLessThan(1.0);
    assertThat(r.aligned()).isEqualTo(4);
    assertThat(r.labelAgreement()).isEqualTo(0.75);
    assertThat(r.labelConfusions()).containsExactly(java.util.Map.entry("text->list_item", 1));
    assertThat(r.pageAgreement()).isEqualTo(0.75);
    assertThat(r.headingLevelAgreement()).isEqualTo(0.0);
    assertThat(r.tableShapes()).containsExactly("2x3");
    assertThat(r.tablesAgree()).isFalse();
    assertThat(r.summary()).startsWith("diff: items 4/4 ref");
  }
}
