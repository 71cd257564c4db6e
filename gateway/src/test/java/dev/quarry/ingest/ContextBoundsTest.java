package dev.quarry.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("A chunk's context is bounded whatever title and name its document has")
class ContextBoundsTest {
  @Test
  @DisplayName("real titles and names are whole; an enormous title is cut at a word, and the context stays within its bound")
  void bounded() {
    assertThat(Chunk.context("Annual Report 2022", "ADOBE_2022_10K.pdf", null))
        .isEqualTo("Annual Report 2022 | ADOBE 2022 10K");
    String huge = "quarterly ledger entry ".repeat(2_000);
    String context = Chunk.context(huge, "reports/" + "x".repeat(5_000) + ".pdf", null);
    assertThat(context.length()).isLessThanOrEqualTo(Chunk.CONTEXT_CHARS);
    assertThat(context).startsWith("quarterly ledger entry").endsWith("…");
    assertThat(Chunk.context(huge, null, null).length()).isLessThanOrEqualTo(Chunk.CONTEXT_TITLE_CHARS);
  }

  @Test
  @DisplayName("cut keeps short text as it is, cuts at the last space past half the bound, and never splits a surrogate pair")
  void cut() {
    assertThat(Chunk.cut("short", 10)).isEqualTo("short");
    assertThat(Chunk.cut(null, 10)).isNull();
    assertThat(Chunk.cut("alpha beta gamma", 12)).isEqualTo("alpha beta…");
    String emoji = "\uD83D\uDE00".repeat(10);
    String cut = Chunk.cut(emoji, 7);
    assertThat(cut.length()).isLessThanOrEqualTo(7);
    assertThat(cut).isEqualTo("\uD83D\uDE00".repeat(3) + "…");
  }
}
