package dev.quarry.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class BenchmarksFileTest {
  @Test
  @DisplayName("a run replaces its own section and keeps the others in place")
  void replacesOnlyItsSection() {
    String text = BenchmarksFile.PREAMBLE + "\n## Retrieval quality\n\nold r\n\n### sub\n\nx\n\n## Search latency\n\nold l\n";
    String out = BenchmarksFile.replace(text, "Retrieval quality", "new r");
    assertThat(out).contains("## Retrieval quality\n\nnew r\n").doesNotContain("old r").doesNotContain("### sub")
        .contains("## Search latency\n\nold l");
    assertThat(out.indexOf("Retrieval quality")).isLessThan(out.indexOf("Search latency"));
    assertThat(out).startsWith("# Benchmarks");
  }

  @Test
  @DisplayName("a section not there yet is appended")
  void appendsNewSection() {
    String out = BenchmarksFile.replace(BenchmarksFile.PREAMBLE, "Ingestion throughput", "figures");
    assertThat(out).startsWith("# Benchmarks").endsWith("## Ingestion throughput\n\nfigures\n");
    assertThat(BenchmarksFile.replace(out, "Ingestion throughput", "figures")).isEqualTo(out);
  }
}
