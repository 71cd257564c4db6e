package dev.quarry.search;

import dev.quarry.config.InvalidSetting;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.model.embedding.onnx.allminilml6v2q.AllMiniLmL6V2QuantizedEmbeddingModel;
import dev.langchain4j.model.embedding.onnx.bgesmallenv15q.BgeSmallEnV15QuantizedEmbeddingModel;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("OnnxEmbedder's own sessions give the vectors LangChain4j's stock models give")
class OnnxQuerySessionTest {
  private static final List<String> QUERIES = List.of("dielectric constant of liquids",
      "what similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft");

  @Test
  @DisplayName("bge-small: queries embed to the same normalised vector, instruction included")
  void bgeSameVectors() {
    OnnxEmbedder embedder = new OnnxEmbedder(OnnxEmbedder.BGE_SMALL);
    BgeSmallEnV15QuantizedEmbeddingModel reference = new BgeSmallEnV15QuantizedEmbeddingModel();
    for (String q : QUERIES) {
      float[] ours = embedder.embedQuery(q);
      assertSame(ours, reference, "Represent this sentence for searching relevant passages: " + q);
      // Passage and query embeddings differ by the instruction: the query path must add it.
      assertThat(dot(ours, embedder.embedPassages(List.of(q)).get(0))).isLessThan(0.999);
    }
  }

  @Test
  @DisplayName("all-MiniLM-L6-v2: queries and passages embed alike, to LangChain4j's vector (mean pooling, no instruction)")
  void miniLmSameVectors() {
    OnnxEmbedder embedder = new OnnxEmbedder("ALL-minilm-l6-v2-Q");
    assertThat(embedder.modelName()).isEqualTo(OnnxEmbedder.MINILM);
    EmbeddingModel reference = new AllMiniLmL6V2QuantizedEmbeddingModel();
    for (String q : QUERIES) {
      float[] ours = embedder.embedQuery(q);
      assertSame(ours, reference, q);
      assertThat(dot(ours, embedder.embedPassages(List.of(q)).get(0))).isGreaterThan(0.9999);
    }
  }

  @Test
  @DisplayName("a model the onnx provider does not bundle is refused by name")
  void unknownModel() {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> new OnnxEmbedder("e5-large"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("e5-large").hasMessageContaining(OnnxEmbedder.BGE_SMALL)
        .hasMessageContaining(OnnxEmbedder.MINILM);
  }

  @Test
  @DisplayName("QUARRY_EMBEDDING_MODEL naming no bundled model is refused at start-up with both names")
  void unknownModelInConfig() {
    dev.quarry.config.Config config = dev.quarry.config.Config.fromEnv(java.util.Map.of("QUARRY_EMBEDDING_MODEL", "e5-large"));
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> Embedders.fromConfig(config))
        .isInstanceOf(dev.quarry.config.InvalidSetting.class)
        .hasMessageContaining("QUARRY_EMBEDDING_MODEL=e5-large").hasMessageContaining(OnnxEmbedder.MINILM);
  }

  private static void assertSame(float[] ours, EmbeddingModel reference, String text) {
    float[] theirs = reference.embed(text).content().vector();
    assertThat(ours).hasSize(384);
    assertThat(dot(ours, ours)).isCloseTo(1.0, within(1e-4));
    assertThat(dot(ours, theirs)).isGreaterThan(0.9999);
  }

  private static double dot(float[] a, float[] b) {
    double sum = 0;
    for (int i = 0; i < a.length; i++) {
      sum += a[i] * b[i];
    }
    return sum;
  }
}
