package dev.quarry.ingest;

import dev.quarry.store.DocItem;

import static dev.quarry.ingest.TocBuilderTest.items;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.support.SharedData;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("Chunker")
class ChunkerTest {

  private static List<Chunk> chunk(List<DocItem> items) {
    return Chunker.chunk(items, TocBuilder.build(items));
  }

  private static String sentences(int n, String word) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < n; i++) {
      sb.append("The ").append(word).append(" sentence number ").append(i).append(" says little. ");
    }
    return sb.toString().strip();
  }

  @Test
  @DisplayName("a heading path is bounded: each heading cut at a word, the outermost left out while the path is too long")
  void boundedHeadingPath() {
    String huge = "ferry timetable ".repeat(3_000).strip();
    List<DocItem> items = items("h1:" + huge, "h2:" + huge, "h3:" + huge, "h4:Fares", "the quarterly fare table");
    Chunk chunk = chunk(items).getLast();
    assertThat(chunk.headings()).hasSizeBetween(2, 3).last().isEqualTo("Fares");
    assertThat(String.join(" > ", chunk.headings()).length()).isLessThanOrEqualTo(Chunker.MAX_PATH_CHARS);
    assertThat(chunk.headings()).allSatisfy(h -> assertThat(h.length()).isLessThanOrEqualTo(Chunker.MAX_HEADING_CHARS));
    assertThat(chunk.headings().getFirst()).startsWith("ferry timetable").endsWith("…");
    assertThat(chunk.content()).endsWith("Fares\n\nthe quarterly fare table")
        .hasSizeLessThanOrEqualTo(Chunker.MAX_PATH_CHARS + 2 + "the quarterly fare table".length());
    // A real path is the same as before.
    assertThat(Chunker.boundedPath(List.of("PART II", "Item 7. Management's Discussion", "Liquidity")))
        .containsExactly("PART II", "Item 7. Management's Discussion", "Liquidity");
  }

  @Test
  @DisplayName("no chunk crosses a section boundary, and each starts with its heading path")
  void sections() {
    List<DocItem> items = items("h1:Alpha", "short a", "h2:Beta", "short b", "h1:Gamma", "short c");
    List<Chunk> chunks = chunk(items);
    assertThat(chunks).hasSize(3);
    assertThat(chunks.get(0).content()).isEqualTo("Alpha\n\nshort a");
    assertThat(chunks.get(1).headings()).containsExactly("Alpha", "Beta");
    assertThat(chunks.get(1).content()).isEqualTo("Alpha > Beta\n\nshort b");
    assertThat(chunks.get(1).docItemRefs()).containsExactly("#/texts/2", "#/texts/3");
    assertThat(chunks.get(1).labels()).containsExactly("section_header", "text");
    assertThat(chunks.get(1).pageNumbers()).containsExactly(3);
    Toc toc = TocBuilder.build(items);
    for (Chunk c : chunks) {
      for (int p = c.itemStart(); p < c.itemEnd(); p++) {
        assertThat(toc.sectionStart()[p]).isEqualTo(toc.sectionStart()[c.itemStart()]);
      }
    }
  }

  @Test
  @DisplayName("packs paragraphs to at most MAX_CHARS, evenly, with contiguous ordinals and ranges")
  void sizes() {
    List<String> spec = new ArrayList<>(List.of("h1:Long section"));
    for (int i = 0; i < 40; i++) {
      spec.add(sentences(3, "p" + i)); // ~ 110 chars each
    }
    List<Chunk> chunks = chunk(items(spec.toArray(String[]::new)));
    assertThat(chunks.size()).isGreaterThan(2);
    int expectedStart = 0;
    for (int i = 0; i < chunks.size(); i++) {
      Chunk c = chunks.get(i);
      assertThat(c.ordinal()).isEqualTo(i);
      assertThat(c.itemStart()).isEqualTo(expectedStart);
      expectedStart = c.itemEnd();
      assertThat(c.content().length()).isLessThanOrEqualTo(Chunker.MAX_CHARS);
      assertThat(c.content().length()).as("evened out, no stub").isGreaterThan(700);
      assertThat(c.content()).startsWith("Long section\n\n");
    }
    assertThat(expectedStart).isEqualTo(41);
  }

  @Test
  @DisplayName("a table is a chunk of its own, whole")
  void tablesWhole() {
    String table = "| a | b |\n|---|---|\n| 1 | 2 |";
    List<Chunk> chunks = chunk(items("h1:Results", "before", "table:" + table, "after"));
    assertThat(chunks).extracting(Chunk::content)
        .containsExactly("Results\n\nbefore", "Results\n\n" + table, "Results\n\nafter");
    assertThat(chunks.get(1).labels()).containsExactly("table");
    assertThat(chunks.get(1).docItemRefs()).containsExactly("#/tables/2");
  }

  @Test
  @DisplayName("a very large table is split by rows, every piece repeating the header row")
  void bigTable() {
    StringBuilder t = new StringBuilder("| name | value |\n|---|---|");
    for (int i = 0; i < 200; i++) {
      t.append("\n| row ").append(i).append(" | ").append(i * 7).append(" |");
    }
    List<Chunk> chunks = chunk(items("table:" + t));
    assertThat(chunks.size()).isGreaterThan(1);
    int rows = 0;
    for (Chunk c : chunks) {
      assertThat(c.content()).startsWith("| name | value |\n|---|---|\n| row ");
      assertThat(c.content().length()).isLessThanOrEqualTo(Chunker.MAX_CHARS);
      assertThat(List.of(c.itemStart(), c.itemEnd())).containsExactly(0, 1);
      rows += (int) c.content().lines().filter(l -> l.startsWith("| row ")).count();
    }
    assertThat(rows).isEqualTo(200);
  }

  @Test
  @DisplayName("one paragraph longer than a chunk is cut at sentence ends")
  void longParagraph() {
    String para = sentences(60, "long");
    List<Chunk> chunks = chunk(items(para));
    assertThat(chunks.size()).isGreaterThan(1);
    assertThat(chunks).allSatisfy(c -> {
      assertThat(c.content().length()).isLessThanOrEqualTo(Chunker.MAX_CHARS);
      assertThat(c.content()).endsWith(".");
    });
    assertThat(String.join(" ", chunks.stream().map(Chunk::content).toList())).isEqualTo(para);
  }

  @Test
  @DisplayName("page headers and footers are not chunked; a header alone yields no chunk")
  void furniture() {
    List<Chunk> chunks = chunk(items("h1:Empty", "h1:Full", "text", "footer:Page 3 of 9", "more"));
    assertThat(chunks).singleElement().satisfies(c -> {
      assertThat(c.content()).isEqualTo("Full\n\ntext\n\nmore");
      assertThat(c.labels()).doesNotContain("page_footer");
      assertThat(c.docItemRefs()).containsExactly("#/texts/1", "#/texts/2", "#/texts/4");
    });
  }

  @Test
  @DisplayName("on a real paper (docling JSON): every chunk within bounds and inside one section")
  void realDocument() throws Exception {
    byte[] bytes = Files.readAllBytes(SharedData.path("docling/docling-json/2206.01062.json"));
    List<DocItem> items = new DoclingJsonConverter().convert("2206.01062.json", bytes).items();
    Toc toc = TocBuilder.build(items);
    List<Chunk> chunks = Chunker.chunk(items, toc);
    assertThat(chunks).isNotEmpty();
    for (Chunk c : chunks) {
      boolean table = c.labels().contains("table");
      assertThat(c.content().length()).isLessThanOrEqualTo(table ? Chunker.MAX_TABLE_CHARS : Chunker.MAX_CHARS);
      int s = toc.sectionStart()[c.itemEnd() - 1];
      for (int p = c.itemStart(); p < c.itemEnd(); p++) {
        if (!items.get(p).isHeader()) {
          assertThat(toc.sectionStart()[p]).isEqualTo(s);
        }
      }
    }
    long tables = items.stream().filter(i -> i.label().equals("table")).count();
    assertThat(chunks.stream().filter(c -> c.labels().contains("table")).count()).isGreaterThanOrEqualTo(tables);
    System.out.printf("2206.01062: %d items -> %d chunks, mean %d chars%n", items.size(), chunks.size(),
        (int) chunks.stream().mapToInt(c -> c.content().length()).average().orElse(0));
  }
}
