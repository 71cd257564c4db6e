package dev.quarry.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The noisy-neighbour benchmark's parts that need no gateway: the scrape, the hostile files, the targets. */
class NoisyNeighbourPartsTest {

  @Test
  @DisplayName("a scrape sums the samples of one name that carry every label asked, and no other name's")
  void scrape() {
    Scrape s = Scrape.of("""
        # HELP jvm_memory_used_bytes The amount of used memory
        jvm_memory_used_bytes{area="heap",id="G1 Eden Space"} 100.0
        jvm_memory_used_bytes{area="heap",id="G1 Old Gen"} 2.5E3
        jvm_memory_used_bytes{area="nonheap",id="Metaspace"} 7.0
        jvm_memory_used_bytes_total{area="heap"} 1000000.0
        quarry_sandboxes_active 3.0
        quarry_callback_duration_seconds_count{kind="search",outcome="ok"} NaN
        """);
    assertThat(s.sum("jvm_memory_used_bytes", "area=\"heap\"")).isEqualTo(2600.0);
    assertThat(s.sum("jvm_memory_used_bytes", "id=\"G1 Old Gen\"")).isEqualTo(2500.0);
    assertThat(s.sum("jvm_memory_used_bytes")).isEqualTo(2607.0);
    assertThat(s.sum("quarry_sandboxes_active")).isEqualTo(3.0);
    assertThat(s.sum("quarry_callback_duration_seconds_count", "kind=\"search\"")).isZero();
    assertThat(s.empty()).isFalse();
    assertThat(Scrape.of(null).empty()).isTrue();
  }

  @Test
  @DisplayName("the hostile grids are small files declaring huge grids, each of the format it names")
  void grids() throws IOException {
    Map<String, HostileFiles.Upload> files = new HashMap<>();
    HostileFiles.grids().forEach(f -> files.put(f.name(), f));
    assertThat(files).containsOnlyKeys("grid.html", "grid.json", "grid.md", "grid.docx");

    String html = new String(files.get("grid.html").bytes(), StandardCharsets.UTF_8);
    assertThat(files.get("grid.html").bytes().length).isBetween(40_000, 50_000);
    assertThat(html.split("colspan=1000 rowspan=65535", -1)).hasSize(51);

    JsonObject docling = new JsonObject(new String(files.get("grid.json").bytes(), StandardCharsets.UTF_8));
    assertThat(docling.getString("schema_name")).isEqualTo("DoclingDocument");
    JsonArray grid = docling.getJsonArray("tables").getJsonObject(0).getJsonObject("data").getJsonArray("grid");
    assertThat(grid).hasSize(60_001);
    assertThat(grid.getJsonArray(0)).hasSize(20_000);
    assertThat(grid.getJsonArray(60_000)).isEmpty();

    String[] md = new String(files.get("grid.md").bytes(), StandardCharsets.UTF_8).split("\n");
    assertThat(md[2].chars().filter(c -> c == '|').count()).isEqualTo(60_001);
    assertThat(md[3]).startsWith("|-|-|");

    byte[] docx = files.get("grid.docx").bytes();
    assertThat(docx.length).isLessThan(1_500);
    Map<String, String> parts = new HashMap<>();
    try (ZipInputStream zip = new ZipInputStream(new ByteArrayInputStream(docx))) {
      for (ZipEntry e = zip.getNextEntry(); e != null; e = zip.getNextEntry()) {
        parts.put(e.getName(), new String(zip.readAllBytes(), StandardCharsets.UTF_8));
      }
    }
    assertThat(parts).containsKeys("[Content_Types].xml", "_rels/.rels", "word/document.xml");
    assertThat(parts.get("word/document.xml")).contains("<w:gridBefore w:val=\"1500000000\"/>");
  }

  @Test
  @DisplayName("the noisy tenant's text is 3 bytes a letter, at least its size, and a short one fits a page")
  void longWords() {
    for (int chars : new int[] {640, 1_250, 10_000, 320_000}) {
      String text = HostileFiles.longWords(chars, 7);
      assertThat(text.length()).isBetween(chars, chars + 12 * 121 + 2);
      String body = text.substring(text.indexOf("\n\n") + 2);
      long letters = body.chars().filter(c -> c != ' ' && c != '\n').count();
      assertThat(body.getBytes(StandardCharsets.UTF_8).length).isEqualTo(3 * letters + (body.length() - letters));
      for (String word : body.split("\\s+")) {
        assertThat(word).hasSize(120);
      }
    }
    // A scoped copy's smallest file grain: the shortest document's text within one 4 KiB page.
    assertThat(HostileFiles.longWords(640, 1).getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(4_096);
  }

  @Test
  @DisplayName("a case meets the targets only with every p50 within 3x, every p95 within 5x and no failure")
  void targets() {
    NoisyNeighbourBench.Case within = new NoisyNeighbourBench.Case(attack("within"), phase(10, 0), phase(29, 0),
        "checked", heap(), heap(), "");
    NoisyNeighbourBench.Case slow = new NoisyNeighbourBench.Case(attack("slow"), phase(10, 0), phase(40, 0),
        "checked", heap(), heap(), "");
    NoisyNeighbourBench.Case failing = new NoisyNeighbourBench.Case(attack("failing"), phase(10, 0), phase(10, 1),
        "checked", heap(), heap(), "");
    String md = NeighbourReport.markdown(List.of(within, slow, failing), 1, 2, 10_000_000, "0, 0, 0");
    assertThat(row(md, "within")).endsWith("| met |");
    assertThat(row(md, "slow")).contains("**NOT met**: search p50 ×4.0").contains("cell p50 ×4.0");
    assertThat(row(md, "failing")).contains("**NOT met**: 1 failed");
    assertThat(md).contains("**NOT met** (1 of 3 cases met)");
  }

  /** A phase whose every operation took {@code ms} (a few samples each), {@code failures} of its searches failed. */
  private static QuietTenant.Phase phase(double ms, int failures) {
    QuietTenant.Phase p = new QuietTenant.Phase();
    for (String op : QuietTenant.OPS) {
      for (int i = 0; i < 5; i++) {
        p.add(op, ms, op.equals("search") && i < failures ? "search: 503" : null);
      }
    }
    return p;
  }

  private static NoisyNeighbourBench.Heap heap() {
    return new NoisyNeighbourBench.Heap(100L << 20, 80L << 20, 700L << 20);
  }

  private static String row(String md, String name) {
    return md.lines().filter(l -> l.startsWith("| " + name + " |")).findFirst().orElseThrow();
  }

  private static Attack attack(String name) {
    return new Attack() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public String how() {
        return "does " + name;
      }

      @Override
      public void start() {}

      @Override
      public String check() {
        return "checked";
      }

      @Override
      public void stop() {}
    };
  }
}
