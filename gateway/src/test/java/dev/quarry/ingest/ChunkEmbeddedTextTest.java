package dev.quarry.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("The model embeds a table's words: its line items and periods, not its figures")
class ChunkEmbeddedTextTest {
  private static final String STATEMENT = """
      FORM 10-K > CONSOLIDATED STATEMENTS OF INCOME

      |  | Years Ended December 31, 2022 | 2021 |
      |---|---|---|
      | Revenue: |  |  |
      | Total revenue | $ 17,606 | $ 15,785 |
      | Cost of revenue | (2,165) | (1,865) |
      | Operating income | 6,098 | 5,802 |
      | Other income (expense), net | 41 | — |
      | Growth | 12.5 % | n/a |""";

  @Test
  @DisplayName("figure cells, empty cells and the rule go; line items, the heading and the header's periods stay")
  void statementWithoutFigures() {
    assertThat(Chunk.withoutFigures(STATEMENT)).isEqualTo("""
        FORM 10-K > CONSOLIDATED STATEMENTS OF INCOME

        Years Ended December 31, 2022 | 2021
        Revenue:
        Total revenue
        Cost of revenue
        Operating income
        Other income (expense), net
        Growth""");
  }

  @Test
  @DisplayName("a table of words keeps every cell, and text without a table is untouched")
  void wordsKept() {
    String securities = """
        | Title of each class | Trading Symbol | Name of each exchange |
        |---|---|---|
        | 3.625% Notes due 2024 | AXP24 | New York Stock Exchange |""";
    assertThat(Chunk.withoutFigures(securities)).isEqualTo("""
        Title of each class | Trading Symbol | Name of each exchange
        3.625% Notes due 2024 | AXP24 | New York Stock Exchange""");
    String prose = "Revenue grew 12% to $ 17,606 million | a record.\n\nSee the notes.";
    assertThat(Chunk.withoutFigures(prose)).isEqualTo(prose);
  }

  @Test
  @DisplayName("the embedded text is the context, then the content without figures; the old form kept them")
  void embeddedText() {
    assertThat(Chunk.embeddedText("ACME 2022 10K", STATEMENT))
        .isEqualTo("ACME 2022 10K\n\n" + Chunk.withoutFigures(STATEMENT))
        .doesNotContain("17,606");
    assertThat(Chunk.embeddedTextWithFigures("ACME 2022 10K", STATEMENT)).isEqualTo("ACME 2022 10K\n\n" + STATEMENT);
    assertThat(Chunk.embeddedText("", "text")).isEqualTo("text");
  }
}
