package dev.quarry.ingest;

import dev.quarry.store.DocItem;

import static dev.quarry.ingest.ConvertersTest.expect;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.ingest.IngestException.Reason;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("TextConverter")
class TextConverterTest {
  private final TextConverter converter = new TextConverter();

  private ConvertedDocument convert(String name, String text) throws IngestException {
    return converter.convert(name, text.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  @DisplayName("splits paragraphs on blank lines (also CRLF and whitespace-only lines) into text items")
  void paragraphs() throws IngestException {
    ConvertedDocument doc = convert("a.txt", "\uFEFFFirst line\nsame paragraph\r\n\r\nSecond\n  \t\n\n\nThird\n");
    assertThat(doc.items()).extracting(DocItem::text)
        .containsExactly("First line\nsame paragraph", "Second", "Third");
    assertThat(doc.items()).extracting(DocItem::selfRef).containsExactly("#/texts/0", "#/texts/1", "#/texts/2");
    assertThat(doc.items()).allSatisfy(it -> {
      assertThat(it.label()).isEqualTo("text");
      assertThat(it.pageNumbers()).isEmpty();
      assertThat(it.headingLevel()).isZero();
    });
    assertThat(doc.sourceType()).isEqualTo(SourceType.TEXT);
  }

  @Test
  @DisplayName("the title is the first line when it is short, else the file name")
  void title() throws IngestException {
    assertThat(convert("a.txt", "Quarterly report\n\nBody").title()).isEqualTo("Quarterly report");
    assertThat(convert("long.txt", "x".repeat(121) + "\n\nBody").title()).isEqualTo("long.txt");
  }

  @Test
  @DisplayName("whitespace only is EMPTY; invalid UTF-8 is INVALID_ENCODING")
  void badInput() {
    expect(() -> convert("blank.txt", " \n\n\t "), Reason.EMPTY, "blank.txt", "only whitespace");
    expect(() -> converter.convert("bad.txt", new byte[] {'o', 'k', (byte) 0xFF}), Reason.INVALID_ENCODING,
        "bad.txt", "UTF-8");
  }
}
