package dev.quarry.ingest;

import dev.quarry.store.DocItem;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.support.SharedData;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every docling pair keeps the figures {@code ./quarry bench conversion} recorded for it, less a
 * small margin: a change that converts one of them worse fails here. The figures are the bench's
 * (BENCHMARKS.md, "Conversion against docling's reference"); a change that improves a file raises
 * its line here, never above what the bench measures.
 */
@DisplayName("Conversion thresholds on every docling pair")
class ConversionThresholdsTest {
  /** Below the recorded figure by at most this much is not a regression. */
  private static final double MARGIN = 0.01;

  /** recall and label agreement as measured; tables: Quarry's count, and how many have docling's shape. */
  private record Threshold(double recall, double labels, int tables, int rightShape) {}

  private static final Map<String, Threshold> RECORDED = Map.ofEntries(
      Map.entry("docling-json/2206.01062.json", new Threshold(0.999, 0.883, 5, 5)),
      Map.entry("docx/Strict.docx", new Threshold(1.0, 1.0, 0, 0)),
      Map.entry("docx/equations.docx", new Threshold(0.983, 1.0, 0, 0)),
      Map.entry("docx/tablecell.docx", new Threshold(1.0, 1.0, 1, 1)),
      Map.entry("docx/textbox.docx", new Threshold(1.0, 1.0, 0, 0)),
      Map.entry("docx/word_sample.docx", new Threshold(1.0, 0.957, 1, 1)),
      Map.entry("html/example_08.html", new Threshold(1.0, 1.0, 3, 3)),
      Map.entry("html/html_description_list.html", new Threshold(1.0, 1.0, 0, 0)),
      // Navigation kept (as docling keeps it), aria-hidden copies left out: recall up from 0.951.
      Map.entry("html/wiki_duck.html", new Threshold(0.984, 0.995, 2, 2)),
      Map.entry("md/escaped_characters.md", new Threshold(1.0, 1.0, 1, 1)),
      Map.entry("md/mixed.md", new Threshold(1.0, 1.0, 1, 1)),
      Map.entry("md/wiki.md", new Threshold(1.0, 1.0, 0, 0)),
      Map.entry("pdf/2305.03393v1-pg9.pdf", new Threshold(1.0, 1.0, 1, 1)),
      Map.entry("pdf/amt_handbook_sample.pdf", new Threshold(1.0, 1.0, 0, 0)),
      Map.entry("pdf/normal_4pages.pdf", new Threshold(0.991, 0.873, 1, 0)),
      // Right-to-left text comes out reversed today (the pdf work fixes it); 0 labels aligned.
      Map.entry("pdf/right_to_left_01.pdf", new Threshold(0.987, 1.0, 0, 0)));

  private static Path docling() {
    return SharedData.path("docling");
  }

  static Stream<String> pairs() {
    return ConversionReport.pairs(docling()).stream().map(p -> p.getParent().getFileName() + "/" + p.getFileName());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pairs")
  @DisplayName("converts without refusal, stores no undecodable character, and holds its recall, labels and tables")
  void holds(String pair) throws Exception {
    Threshold t = RECORDED.get(pair);
    assertThat(t).as("%s has no recorded threshold: run ./quarry bench conversion and add its line", pair).isNotNull();
    Converters converters = new Converters(Long.MAX_VALUE);
    Path source = docling().resolve(pair);
    byte[] bytes = java.nio.file.Files.readAllBytes(source);
    List<DocItem> items = converters.convertClean(converters.detect(pair, null, bytes), pair, bytes).document().items();
    assertThat(items).allSatisfy(i -> assertThat(i.text().codePoints().filter(TextHygiene::undecodable)).isEmpty());
    ConversionReport r = ConversionReport.ingested(converters, source);
    assertThat(r.tokenRecall()).as("%s text recall (%s)", pair, r.summary()).isGreaterThanOrEqualTo(t.recall() - MARGIN);
    if (t.labels() > 0) {
      assertThat(r.labelAgreement()).as("%s label agreement (%s)", pair, r.summary())
          .isGreaterThanOrEqualTo(t.labels() - MARGIN);
    }
    assertThat(r.tableShapes()).as("%s tables", pair).hasSize(t.tables());
    assertThat(r.rightShapeTables()).as("%s tables of docling's shape", pair).isGreaterThanOrEqualTo(t.rightShape());
  }

  @org.junit.jupiter.api.Test
  @DisplayName("every recorded file is still a docling pair")
  void noStaleLines() {
    assertThat(pairs().collect(Collectors.toSet())).containsAll(RECORDED.keySet());
  }
}
