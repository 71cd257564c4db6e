package dev.quarry.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class SyntheticCorpusTest {
  @Test
  @DisplayName("synthetic chunks carry unit vectors close to, but not equal to, their source's")
  void vectorsStayNearTheirSource() {
    float[] base = new float[384];
    base[0] = 1;
    SyntheticCorpus c = SyntheticCorpus.generate(50, List.of("alpha beta gamma"), List.of(base),
        List.of("one two three four five six seven eight nine ten eleven twelve"), 1);
    assertThat(c.ids()).hasSize(50).doesNotHaveDuplicates();
    assertThat(c.texts()).allMatch(t -> t.startsWith("alpha beta gamma "));
    for (float[] v : c.vectors()) {
      double norm = 0;
      for (float f : v) {
        norm += f * f;
      }
      assertThat(Math.sqrt(norm)).isBetween(0.999, 1.001);
      assertThat((double) v[0]).isBetween(0.95, 0.9999); // cosine with the source
    }
  }

  @Test
  @DisplayName("streamed chunks are the generated corpus, in order, so a kept database loaded either way holds the same rows")
  void streamedAsGenerated() {
    List<String> bases = List.of("alpha beta gamma", "delta epsilon");
    float[] a = new float[384];
    a[0] = 1;
    float[] b = new float[384];
    b[1] = 1;
    List<String> others = List.of("one two three four five six seven eight nine ten eleven twelve",
        "red green blue cyan magenta yellow black white grey");
    SyntheticCorpus whole = SyntheticCorpus.generate(40, bases, List.of(a, b), others, 7);
    java.util.Iterator<SyntheticCorpus.Chunk> streamed = SyntheticCorpus.chunks(40, bases, List.of(a, b), others, 7);
    for (int i = 0; i < 40; i++) {
      SyntheticCorpus.Chunk c = streamed.next();
      assertThat(c.id()).isEqualTo(whole.ids().get(i));
      assertThat(c.text()).isEqualTo(whole.texts().get(i));
      assertThat(c.vector()).containsExactly(whole.vectors().get(i));
    }
    assertThat(streamed.hasNext()).isFalse();
    // Another seed is another corpus: the seed is part of what a kept database is matched by.
    assertThat(SyntheticCorpus.generate(40, bases, List.of(a, b), others, 8).texts()).isNotEqualTo(whole.texts());
  }

  @Test
  @DisplayName("percentiles are nearest-rank")
  void percentiles() {
    double[] ms = new double[200];
    for (int i = 0; i < ms.length; i++) {
      ms[i] = i + 1;
    }
    Percentiles p = Percentiles.of(ms);
    assertThat(p.p50()).isEqualTo(100);
    assertThat(p.p95()).isEqualTo(190);
    assertThat(p.count()).isEqualTo(200);
  }
}
