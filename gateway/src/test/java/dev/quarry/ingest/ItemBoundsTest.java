package dev.quarry.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.store.DocItem;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("ItemBounds")
class ItemBoundsTest {
  private static DocItem item(int position, String ref, String label, String text) {
    return new DocItem(position, ref, label, text, List.of(3, 4), label.equals("section_header") ? 2 : 0, 1);
  }

  /** Text with every whitespace run removed: what a cut may change, so what must survive it. */
  private static String ink(String text) {
    return text.replaceAll("\\s+", "");
  }

  @Test
  @DisplayName("a document within the bound is the same object; an overlong item becomes pieces, the rest renumbered")
  void splitsOnlyWhatIsOver() {
    ConvertedDocument small = new ConvertedDocument("t", SourceType.TEXT, List.of(item(0, "#/texts/0", "text", "short")));
    assertThat(ItemBounds.apply(small, 20)).isSameAs(small);

    String log = "line one of the log\nline two of the log\nline three of the log\nline four";
    ConvertedDocument doc = new ConvertedDocument("t", SourceType.TEXT, List.of(
        item(0, "#/texts/0", "section_header", "Log"),
        item(1, "#/texts/1", "text", log),
        item(2, "#/texts/2", "text", "after")));
    List<DocItem> items = ItemBounds.apply(doc, 45).items();
    assertThat(items).extracting(DocItem::position).containsExactly(0, 1, 2, 3);
    assertThat(items).extracting(DocItem::text).containsExactly("Log",
        "line one of the log\nline two of the log", "line three of the log\nline four", "after");
    // The pieces are the same item, as far as anything that reads them can tell.
    assertThat(items.subList(1, 3)).allSatisfy(p -> {
      assertThat(p.selfRef()).isEqualTo("#/texts/1");
      assertThat(p.label()).isEqualTo("text");
      assertThat(p.pageNumbers()).containsExactly(3, 4);
      assertThat(p.treeDepth()).isEqualTo(1);
    });
  }

  private static void refused(ConvertedDocument doc, IngestException.Reason reason, String detail) {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> ItemBounds.apply("hostile.json", doc))
        .isInstanceOfSatisfying(IngestException.class, e -> assertThat(e.reason()).isEqualTo(reason))
        .hasMessageStartingWith("hostile.json: ").hasMessageContaining(detail);
  }

  private static ConvertedDocument docOf(List<DocItem> items) {
    return new ConvertedDocument("t", SourceType.DOCLING, items);
  }

  @Test
  @DisplayName("a document beyond the bounds in all is refused, naming what is over: text, items, pages, refs and labels")
  void documentBounds() throws Exception {
    List<DocItem> big = new ArrayList<>();
    String text = "x".repeat(ItemBounds.MAX_ITEM_CHARS);
    for (int i = 0; (long) i * text.length() <= ItemBounds.MAX_DOCUMENT_CHARS; i++) {
      big.add(new DocItem(i, "#/texts/" + i, "text", text, List.of(1), 0, 0));
    }
    refused(docOf(big), IngestException.Reason.TOO_LARGE, "characters of text; the limit is 10000000");
    // A small source may not expand past its allowance: 1,000 bytes to 300,000 characters.
    List<DocItem> expanded = List.of(new DocItem(0, "#/tables/0", "table", "| a |\n|---|\n" + "| x |\n".repeat(50_000), List.of(1), 0, 0));
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> ItemBounds.apply("span.json", docOf(expanded), 1_000))
        .isInstanceOf(IngestException.class).hasMessageContaining("the limit is 200000 for one document of 1000 bytes");
    assertThat(ItemBounds.apply("span.json", docOf(expanded), 20_000).items()).hasSizeGreaterThan(1);
    assertThat(ItemBounds.maxChars(10)).isEqualTo(ItemBounds.FREE_CHARS);
    assertThat(ItemBounds.maxChars(50L * 1024 * 1024)).isEqualTo(ItemBounds.MAX_DOCUMENT_CHARS);
    List<DocItem> many = new ArrayList<>();
    for (int i = 0; i <= ItemBounds.MAX_ITEMS; i++) {
      many.add(new DocItem(i, "#/pictures/" + i, "picture", "", List.of(), 0, 0));
    }
    refused(docOf(many), IngestException.Reason.TOO_LARGE, "items; the limit is " + ItemBounds.MAX_ITEMS);
    List<Integer> pages = java.util.stream.IntStream.rangeClosed(1, ItemBounds.MAX_ITEM_PAGES + 1).boxed().toList();
    refused(docOf(List.of(new DocItem(0, "#/texts/0", "text", "a", pages, 0, 0))),
        IngestException.Reason.MALFORMED, "lists 2001 pages");
    List<DocItem> spread = new ArrayList<>();
    for (int i = 0; i < 600; i++) {
      spread.add(new DocItem(i, "#/texts/" + i, "text", "a", pages.subList(0, ItemBounds.MAX_ITEM_PAGES), 0, 0));
    }
    refused(docOf(spread), IngestException.Reason.TOO_LARGE, "page numbers in all");
    refused(docOf(List.of(new DocItem(0, "#/texts/" + "0".repeat(100) + "1", "text", "a", List.of(), 0, 0))),
        IngestException.Reason.MALFORMED, "self_ref or label longer than 64");
    refused(docOf(List.of(new DocItem(0, "#/texts/0", "l".repeat(65), "a", List.of(), 0, 0))),
        IngestException.Reason.MALFORMED, "self_ref or label");
    // Within the bounds: pages listed once each, in order; the rest as it was.
    ConvertedDocument ok = ItemBounds.apply("fine.json", docOf(List.of(
        new DocItem(0, "#/texts/0", "text", "a", List.of(3, 1, 3, 2), 0, 0))));
    assertThat(ok.items().get(0).pageNumbers()).containsExactly(1, 2, 3);
  }

  @Test
  @DisplayName("text without line breaks is cut at a space; text without spaces at the bound, never inside a surrogate pair")
  void cutsAtSpacesThenAnywhere() {
    assertThat(ItemBounds.pieces("text", "alpha beta gamma delta epsilon", 12))
        .containsExactly("alpha beta", "gamma delta", "epsilon");
    assertThat(ItemBounds.pieces("text", "abcdefghij", 4)).containsExactly("abcd", "efgh", "ij");
    String emoji = "\uD83D\uDE00".repeat(5); // ten chars, five code points
    List<String> pieces = ItemBounds.pieces("code", "a" + emoji, 4);
    assertThat(String.join("", pieces)).isEqualTo("a" + emoji);
    assertThat(pieces).allSatisfy(p -> {
      assertThat(p.length()).isLessThanOrEqualTo(4);
      assertThat(Character.isLowSurrogate(p.charAt(0))).as(p).isFalse();
      assertThat(Character.isHighSurrogate(p.charAt(p.length() - 1))).as(p).isFalse();
    });
  }

  @Test
  @DisplayName("a long Markdown table becomes tables of whole rows, each under the table's header")
  void tablesKeepTheirHeader() {
    StringBuilder table = new StringBuilder("| Year | Revenue |\n|---|---:|\n");
    for (int y = 1990; y < 2030; y++) {
      table.append("| ").append(y).append(" | ").append(y * 7).append(" |\n");
    }
    String text = table.toString().strip();
    List<String> pieces = ItemBounds.pieces("table", text, 200);
    assertThat(pieces).hasSizeGreaterThan(3);
    List<String> rows = new ArrayList<>();
    for (String p : pieces) {
      assertThat(p.length()).isLessThanOrEqualTo(200);
      assertThat(p).startsWith("| Year | Revenue |\n|---|---:|\n| ");
      List<String> lines = p.lines().toList();
      rows.addAll(lines.subList(2, lines.size()));
    }
    assertThat(rows).isEqualTo(text.lines().skip(2).toList());
    // Text labelled a table that is not a Markdown table is cut as prose.
    assertThat(ItemBounds.pieces("table", "a b c d e f g h", 5)).containsExactly("a b c", "d e f", "g h");
  }

  @Property(tries = 300)
  @Label("any text: every piece within the bound and not blank, and together they are the text but for whitespace at cuts")
  void piecesKeepEverything(@ForAll("texts") String text, @ForAll @IntRange(min = 2, max = 300) int max,
      @ForAll("labels") String label) {
    List<String> pieces = ItemBounds.pieces(label, text, max);
    if (text.length() <= max) {
      assertThat(pieces).containsExactly(text);
      return;
    }
    assertThat(pieces).allSatisfy(p -> {
      assertThat(p.length()).isLessThanOrEqualTo(max);
      assertThat(p.isBlank()).isFalse();
    });
    String header = "| h |\n|---|\n";
    boolean headed = label.equals("table") && text.startsWith(header) && header.length() <= max / 2;
    StringBuilder joined = new StringBuilder(headed ? header : "");
    for (String p : pieces) {
      joined.append(headed && p.startsWith(header) ? p.substring(header.length()) : p);
    }
    assertThat(ink(joined.toString())).isEqualTo(ink(text));
  }

  @Provide
  Arbitrary<String> labels() {
    return Arbitraries.of("text", "table", "code", "list_item");
  }

  @Provide
  Arbitrary<String> texts() {
    Arbitrary<String> prose = Arbitraries.strings().withChars("ab \n\t").withChars('\uD83D')
        .ofMinLength(0).ofMaxLength(800)
        .map(s -> s.replace("\uD83D", "\uD83D\uDE00")); // whole pairs only, as TextHygiene leaves them
    Arbitrary<String> table = Arbitraries.strings().withChars("xy| ").ofMinLength(0).ofMaxLength(40)
        .list().ofMaxSize(60).map(rows -> {
          StringBuilder t = new StringBuilder("| h |\n|---|");
          rows.forEach(r -> t.append("\n| ").append(r).append(" |"));
          return t.toString();
        });
    return Arbitraries.oneOf(prose, table);
  }
}
