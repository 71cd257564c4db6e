package dev.quarry.search;

import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.model.embedding.onnx.bgesmallenv15q.BgeSmallEnV15QuantizedEmbeddingModel;
import java.util.ArrayList;
import java.util.List;

/**
 * The default embedder: bge-small-en-v1.5 (quantized), in process through ONNX Runtime, so no
 * network is needed. bge expects an instruction in front of queries (not passages).
 */
public final class OnnxEmbedder implements Embedder {
  public static final String BGE_SMALL = "bge-small-en-v1.5-q";
  private static final String BGE_QUERY_INSTRUCTION =
      "Represent this sentence for searching relevant passages: ";

  private final EmbeddingModel model;

  public OnnxEmbedder() {
    this.model = new BgeSmallEnV15QuantizedEmbeddingModel();
  }

  @Override
  public String modelName() {
    return BGE_SMALL;
  }

  @Override
  public int dimensions() {
    return 384;
  }

  @Override
  public List<float[]> embedPassages(List<String> texts) {
    if (texts.isEmpty()) {
      return List.of();
    }
    List<TextSegment> segments = new ArrayList<>(texts.size());
    for (String t : texts) {
      segments.add(TextSegment.from(t));
    }
    List<Embedding> out = model.embedAll(segments).content();
    List<float[]> vectors = new ArrayList<>(out.size());
    for (Embedding e : out) {
      vectors.add(e.vector());
    }
    return vectors;
  }

  @Override
  public float[] embedQuery(String query) {
    return model.embed(BGE_QUERY_INSTRUCTION + query).content().vector();
  }
}
