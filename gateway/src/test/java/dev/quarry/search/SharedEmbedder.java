package dev.quarry.search;

/** One ONNX embedder for all the search tests of a run: loading the model takes seconds. */
final class SharedEmbedder {
  private SharedEmbedder() {}

  private static final class Holder {
    static final OnnxEmbedder INSTANCE = new OnnxEmbedder();
  }

  static Embedder get() {
    return Holder.INSTANCE;
  }
}
