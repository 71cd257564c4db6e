package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;

import dev.langchain4j.model.embedding.onnx.bgesmallenv15q.BgeSmallEnV15QuantizedEmbeddingModel;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("The ONNX query session gives the vectors LangChain4j's own bge session gives")
class OnnxQuerySessionTest {
  @Test
  @DisplayName("queries embed to the same normalised vector, instruction included")
  void sameVectors() {
    Embedder embedder = SharedEmbedder.get();
    BgeSmallEnV15QuantizedEmbeddingModel reference = new BgeSmallEnV15QuantizedEmbeddingModel();
    for (String q : List.of("dielectric constant of liquids", "what similarity laws must be obeyed"
        + " when constructing aeroelastic models of heated high speed aircraft")) {
      float[] ours = embedder.embedQuery(q);
      float[] theirs = reference.embed("Represent this sentence for searching relevant passages: " + q)
          .content().vector();
      assertThat(ours).hasSize(384);
      double dot = 0;
      double norm = 0;
      for (int i = 0; i < ours.length; i++) {
        dot += ours[i] * theirs[i];
        norm += ours[i] * ours[i];
      }
      assertThat(norm).isCloseTo(1.0, org.assertj.core.api.Assertions.within(1e-4));
      assertThat(dot).isGreaterThan(0.9999);
      // Passage and query embeddings differ by the instruction: the query path must add it.
      float[] passage = embedder.embedPassages(List.of(q)).get(0);
      double cross = 0;
      for (int i = 0; i < ours.length; i++) {
        cross += ours[i] * passage[i];
      }
      assertThat(cross).isLessThan(0.999);
    }
  }
}
