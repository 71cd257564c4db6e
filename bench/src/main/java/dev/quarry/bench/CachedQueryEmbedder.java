package dev.quarry.bench;

import dev.quarry.search.Embedder;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Hands Quarry the cached query vectors, so Quarry and the baselines rank with byte-identical
 * vectors and the model is not paid for again; any other text goes to the real model.
 */
public final class CachedQueryEmbedder implements Embedder {
  private final Embedder model;
  private final Map<String, float[]> queries = new HashMap<>();

  public CachedQueryEmbedder(Embedder model) {
    this.model = model;
  }

  public void remember(List<String> texts, List<float[]> vectors) {
    for (int i = 0; i < texts.size(); i++) {
      queries.put(texts.get(i), vectors.get(i));
    }
  }

  @Override
  public String modelName() {
    return model.modelName();
  }

  @Override
  public int dimensions() {
    return model.dimensions();
  }

  @Override
  public List<float[]> embedPassages(List<String> texts) {
    return model.embedPassages(texts);
  }

  @Override
  public float[] embedQuery(String query) {
    float[] v = queries.get(query);
    return v != null ? v : model.embedQuery(query);
  }
}
