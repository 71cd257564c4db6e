package dev.quarry.support;

import dev.quarry.search.Embedder;
import java.util.List;

/** An embedder that passes every call to another: a test overrides the one it needs to break, gate or time. */
public class DelegatingEmbedder implements Embedder {
  private final Embedder delegate;

  public DelegatingEmbedder(Embedder delegate) {
    this.delegate = delegate;
  }

  @Override
  public String modelName() {
    return delegate.modelName();
  }

  @Override
  public int dimensions() {
    return delegate.dimensions();
  }

  @Override
  public List<float[]> embedPassages(List<String> texts) {
    return delegate.embedPassages(texts);
  }

  @Override
  public float[] embedQuery(String query) {
    return delegate.embedQuery(query);
  }
}
