package dev.quarry.ingest;

import dev.quarry.store.DocItem;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quarry.ingest.IngestException.Reason;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("TextHygiene")
class TextHygieneTest {
  private static DocItem item(int position, String label, String text) {
    return new DocItem(position, "#/texts/" + position, label, text, List.of(1), 0, 0);
  }

  private static ConvertedDocument doc(DocItem... items) {
    return new ConvertedDocument("t", SourceType.PDF, List.of(items));
  }

  @Test
  @DisplayName("drops control characters, U+FFFD, private-use and noncharacters; keeps tab, newline and real text")
  void cleansText() {
    assertThat(TextHygiene.clean("Rev\u0001enue\u0002 \uFFFD\uFFFD grew\u007F\u0085by \uE001\uE002\uDB80\uDC00 12%\t€ 東京 عربي"))
        .isEqualTo("Revenue grew\nby 12%\t€ 東京 عربي");
    assertThat(TextHygiene.clean("a\r\nb\rc\fd\u000Be")).isEqualTo("a\nb\nc\nd\ne");
    assertThat(TextHygiene.clean("clean text stays the same object")).isEqualTo("clean text stays the same object");
    for (int cp = 0; cp < 0x20; cp++) {
      assertThat(TextHygiene.undecodable(cp)).as("U+%04X", cp).isEqualTo(cp != '\t' && cp != '\n');
    }
    for (int cp : new int[] {0x80, 0x9F, 0xFFFD, 0xE000, 0xF8FF, 0xF0000, 0x10FFFD, 0xFDD0, 0xFFFE, 0x1FFFF, 0xD800}) {
      assertThat(TextHygiene.undecodable(cp)).as("U+%04X", cp).isTrue();
    }
    for (int cp : new int[] {' ', 'a', 0xA0, 0x200D, 0x2028 - 1, 0x4E00, 0x1F600, 0xFB01}) {
      assertThat(TextHygiene.undecodable(cp)).as("U+%04X", cp).isFalse();
    }
  }

  @Test
  @DisplayName("an item of nothing but undecodable characters is dropped; the rest renumbered and counted")
  void dropsGarbageItems() throws Exception {
    TextHygiene.Result r = TextHygiene.apply("f.pdf", doc(
        item(0, "text", "Real words"),
        item(1, "text", "\u0003\u0004\u0005\uE000\uE001"),
        item(2, "section_header", "Next \uFFFDpart")));
    assertThat(r.document().items()).extracting(DocItem::text).containsExactly("Real words", "Next part");
    assertThat(r.document().items()).extracting(DocItem::position).containsExactly(0, 1);
    assertThat(r.document().items().get(1).selfRef()).isEqualTo("#/texts/2");
    assertThat(r.undecodableChars()).isEqualTo(6);
    assertThat(r.droppedItems()).isEqualTo(1);
  }

  @Test
  @DisplayName("no letter or digit left: EMPTY when nothing was found at all, NO_TEXT_EXTRACTED otherwise")
  void refusesNoText() {
    assertThatThrownBy(() -> TextHygiene.apply("empty.docx", doc()))
        .isInstanceOfSatisfying(IngestException.class, e -> assertThat(e.reason()).isEqualTo(Reason.EMPTY))
        .hasMessageContaining("empty.docx: has no content");
    assertThatThrownBy(() -> TextHygiene.apply("scan.pdf", doc(
        new DocItem(0, "#/pictures/0", "picture", "", List.of(1), 0, 0),
        item(1, "text", "\u0001\u0002\u0003"))))
        .isInstanceOfSatisfying(IngestException.class,
            e -> assertThat(e.reason()).isEqualTo(Reason.NO_TEXT_EXTRACTED))
        .hasMessageContaining("scan.pdf: yields no text")
        .hasMessageContaining("1 picture(s)")
        .hasMessageContaining("3 undecodable character(s)");
    assertThatThrownBy(() -> TextHygiene.apply("grid.docx", doc(
        new DocItem(0, "#/tables/0", "table", "|  |  |\n|---|---|\n|  |  |", List.of(), 0, 0))))
        .isInstanceOfSatisfying(IngestException.class,
            e -> assertThat(e.reason()).isEqualTo(Reason.NO_TEXT_EXTRACTED));
  }

  @Test
  @DisplayName("through every converter: no stored item of any format holds an undecodable character")
  void everyConverter() throws Exception {
    Converters converters = new Converters(1 << 20);
    String garbage = "Quarterly \u0007report\uFFFD with \uE0FF\uE100 glyphs";
    for (String[] source : List.of(
        new String[] {"a.txt", garbage},
        new String[] {"a.md", "# " + garbage + "\n\n" + garbage},
        new String[] {"a.html", "<html><body><h1>" + garbage + "</h1><p>" + garbage + "</p></body></html>"})) {
      byte[] bytes = source[1].getBytes(StandardCharsets.UTF_8);
      SourceType type = converters.detect(source[0], null, bytes);
      TextHygiene.Result r = converters.convertClean(type, source[0], bytes);
      assertThat(r.undecodableChars()).as(source[0]).isPositive();
      assertThat(r.document().items()).as(source[0]).isNotEmpty().allSatisfy(i -> {
        assertThat(i.text().codePoints().filter(TextHygiene::undecodable)).isEmpty();
        assertThat(i.text()).contains("Quarterly report with glyphs");
      });
    }
  }
}
