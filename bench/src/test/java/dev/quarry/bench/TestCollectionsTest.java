package dev.quarry.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class TestCollectionsTest {
  private final Path retrieval = BenchPaths.detect().retrieval();

  @Test
  @DisplayName("Vaswani: 11,429 documents, 93 queries, 2,083 binary judgments")
  void vaswani() {
    TestCollection c = TestCollections.vaswani(retrieval);
    assertThat(c.docs()).hasSize(11_429);
    assertThat(c.queries()).hasSize(93);
    assertThat(c.judgmentCount()).isEqualTo(2_083);
    assertThat(c.judgedQueries()).hasSize(93);
    assertThat(c.docs().get(0).id()).isEqualTo("1");
    assertThat(c.docs().get(0).text()).startsWith("compact memories have flexible capacities");
    assertThat(c.queries().get(0).text()).isEqualTo("MEASUREMENT OF DIELECTRIC CONSTANT OF LIQUIDS BY THE USE OF MICROWAVE TECHNIQUES");
  }

  @Test
  @DisplayName("Cranfield: two empty documents left out, queries numbered by order, grade 5 rows dropped")
  void cranfield() {
    TestCollection c = TestCollections.cranfield(retrieval);
    assertThat(c.docs()).hasSize(1_398);
    assertThat(c.skippedEmptyDocs()).isEqualTo(2);
    assertThat(c.queries()).hasSize(225);
    // 1,836 rows, of which 224 carry the non-grade 5.
    assertThat(c.judgmentCount()).isEqualTo(1_612);
    assertThat(c.qrels().values()).allSatisfy(g -> assertThat(g.values()).allMatch(v -> v >= 1 && v <= 4));
    // The third query in the file has .I 004 but is query 3 in the judgments.
    assertThat(c.queries().get(2).id()).isEqualTo("3");
    assertThat(c.queries().get(2).text()).startsWith("what problems of heat conduction in composite slabs");
    assertThat(c.qrels().get("1")).containsEntry("184", 3);
  }

  @Test
  @DisplayName("MS MARCO (agentset): 5,000 passages, 50 queries of which 43 judged, graded 1 to 3")
  void msmarco() {
    TestCollection c = TestCollections.msmarco(retrieval);
    assertThat(c.docs()).hasSize(5_000);
    assertThat(c.queries()).hasSize(50);
    assertThat(c.judgedQueries()).hasSize(43);
    assertThat(c.judgmentCount()).isEqualTo(4_102);
    assertThat(c.queries().get(0).id()).isEqualTo("19335");
    assertThat(c.qrels().get("19335")).containsEntry("1720389", 1).containsEntry("1729", 2);
    assertThat(c.docs().get(0).text()).startsWith("Fahrenheit Scale-Daniel Gabriel Fahrenheit.");
  }
}
