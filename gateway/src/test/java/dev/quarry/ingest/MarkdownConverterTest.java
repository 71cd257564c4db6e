package dev.quarry.ingest;

import dev.quarry.store.DocItem;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import dev.quarry.ingest.IngestException.Reason;
import dev.quarry.support.SharedData;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("MarkdownConverter")
class MarkdownConverterTest {
  private final MarkdownConverter converter = new MarkdownConverter();

  private ConvertedDocument convert(String markdown) throws IngestException {
    return converter.convert("doc.md", markdown.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  @DisplayName("agrees with docling's reference on escaped_characters.md")
  void escapedCharactersAgainstDocling() {
    ConversionReport report = ConversionReport.of(converter, SharedData.path("docling/md/escaped_characters.md"));
    System.out.println(report.summary());
    assertThat(report.tokenRecall()).isGreaterThanOrEqualTo(0.99);
    assertThat(report.tokenPrecision()).isGreaterThanOrEqualTo(0.99);
    assertThat(report.alignment()).isGreaterThanOrEqualTo(0.99);
    assertThat(report.labelAgreement()).isGreaterThanOrEqualTo(0.99);
    assertThat(report.headingLevelAgreement()).isGreaterThanOrEqualTo(0.99);
    assertThat(report.tablesAgree()).isTrue();
  }

  @Test
  @DisplayName("resolves entities and escapes as docling does")
  void escapes() throws Exception {
    List<DocItem> items = converter.convert("escaped_characters.md",
        Files.readAllBytes(SharedData.path("docling/md/escaped_characters.md"))).items();
    List<DocItem> reference = ConversionReport.reference(SharedData.path("docling/md/escaped_characters.md"));
    assertThat(items.get(1).text()).isEqualTo("& < > \" '").isEqualTo(reference.get(1).text());
    assertThat(items.stream().filter(i -> i.label().equals("table")).findFirst().orElseThrow().text())
        .contains("| Pipe | \\| \\| \\| |");
    assertThat(items).filteredOn(i -> i.label().equals("code")).extracting(DocItem::text)
        .containsExactly("& < > \" '", "& < > \" '");
    assertThat(items).filteredOn(i -> i.text().endsWith("/div>")).extracting(DocItem::text)
        .containsExactly("& < > \" '/div>");
  }

  @Test
  @DisplayName("reads wiki.md: the title, its sections and paragraphs")
  void wiki() throws Exception {
    ConvertedDocument doc = converter.convert("wiki.md", Files.readAllBytes(SharedData.path("docling/md/wiki.md")));
    assertThat(doc.title()).isEqualTo("IBM");
    assertThat(doc.items().get(0)).extracting(DocItem::label, DocItem::text).containsExactly("title", "IBM");
    assertThat(doc.items()).filteredOn(i -> i.label().equals("section_header"))
        .extracting(DocItem::text, DocItem::headingLevel)
        .contains(tuple("1910s–1950s", 1), tuple("1960s–1980s", 1));
    assertThat(doc.items()).allSatisfy(i -> assertThat(i.pageNumbers()).isEmpty());
    assertThat(doc.items()).filteredOn(i -> i.label().equals("text")).hasSizeGreaterThan(5);
  }

  @Test
  @DisplayName("maps ATX and setext headings: # is the title, ## … ###### are levels 1 … 5")
  void headings() throws Exception {
    List<DocItem> items = convert("# Top\n\n## Two\n\n###### Six\n\nSetext one\n===\n\nSetext two\n---\n").items();
    assertThat(items).extracting(DocItem::label, DocItem::text, DocItem::headingLevel).containsExactly(
        tuple("title", "Top", 0), tuple("section_header", "Two", 1), tuple("section_header", "Six", 5),
        tuple("title", "Setext one", 0), tuple("section_header", "Setext two", 1));
    assertThat(convert("# Top\n").title()).isEqualTo("Top");
    assertThat(convert("## Only a section\n").title()).isEqualTo("Only a section");
    assertThat(convert("just text\n").title()).isEqualTo("doc.md");
  }

  @Test
  @DisplayName("nests lists two levels deeper per list, like docling's list groups")
  void nestedLists() throws Exception {
    List<DocItem> items = convert("- a\n  - b\n    1. c\n- d\n\n  more of d\n").items();
    assertThat(items).extracting(DocItem::label, DocItem::text, DocItem::treeDepth).containsExactly(
        tuple("list_item", "a", 1), tuple("list_item", "b", 3), tuple("list_item", "c", 5),
        tuple("list_item", "d", 1), tuple("text", "more of d", 2));
  }

  @Test
  @DisplayName("turns GFM tables, code blocks, quotes and images into their items")
  void blocks() throws Exception {
    String md = """
        | A | B |
        |---|---|
        | *1* | `2` |

        ```python
        print("x")
        ```

            indented code

        > quoted **words**

        Look: ![a duck](duck.png "Duck")
        """;
    List<DocItem> items = convert(md).items();
    assertThat(items).extracting(DocItem::selfRef, DocItem::label, DocItem::text).containsExactly(
        tuple("#/tables/0", "table", "| A | B |\n|---|---|\n| 1 | 2 |"),
        tuple("#/texts/0", "code", "print(\"x\")"),
        tuple("#/texts/1", "code", "indented code"),
        tuple("#/texts/2", "text", "quoted words"),
        tuple("#/texts/3", "text", "Look:"),
        tuple("#/pictures/0", "picture", "a duck"));
    assertThat(items.get(3).treeDepth()).isEqualTo(1);
  }

  @Test
  @DisplayName("rejects bytes that are not UTF-8")
  void invalidUtf8() {
    byte[] latin1 = "caf\u00e9 au lait".getBytes(StandardCharsets.ISO_8859_1);
    assertThatThrownBy(() -> converter.convert("doc.md", latin1))
        .isInstanceOfSatisfying(IngestException.class, e -> {
          assertThat(e.reason()).isEqualTo(Reason.INVALID_ENCODING);
          assertThat(e.getMessage()).isEqualTo("doc.md: not valid UTF-8 (bad byte sequence near byte 3)");
        });
  }

  @Test
  @DisplayName("rejects pathologically nested markup as malformed instead of crashing, naming the limit")
  void tooDeep() {
    // A run of asterisks is seen before commonmark parses it.
    String md = "*".repeat(50_000) + "z" + "*".repeat(50_000) + "\n";
    assertThatThrownBy(() -> convert(md))
        .isInstanceOfSatisfying(IngestException.class, e -> {
          assertThat(e.reason()).isEqualTo(Reason.MALFORMED);
          assertThat(e.getMessage()).startsWith("doc.md: is nested deeper than 256 levels (a run of 513");
        });
    // Emphasis opened word by word is only seen when the parser's stack runs out.
    String alternating = "*a _a ".repeat(40_000) + "z" + " a_ a*".repeat(40_000) + "\n";
    assertThatThrownBy(() -> convert(alternating))
        .isInstanceOfSatisfying(IngestException.class, e -> {
          assertThat(e.reason()).isEqualTo(Reason.MALFORMED);
          assertThat(e.getMessage()).contains("nested deeper than the Markdown parser can follow", "256 levels");
        });
  }

  @Test
  @DisplayName("drops a byte-order mark")
  void bom() throws Exception {
    byte[] bytes = "\uFEFF# Title\n".getBytes(StandardCharsets.UTF_8);
    assertThat(converter.convert("doc.md", bytes).items().get(0).text()).isEqualTo("Title");
  }
}
