package dev.quarry.search;

import java.util.List;

/**
 * Turns text into unit-length vectors. The model name is stored with every vector, so a change of
 * model is seen and forces a re-embed. Implementations are thread-safe and blocking: call them from
 * worker threads.
 */
public interface Embedder {
  /** The model's name as recorded with the vectors, e.g. {@code bge-small-en-v1.5-q}. */
  String modelName();

  int dimensions();

  /** Embeds passages (document chunks), batched. */
  List<float[]> embedPassages(List<String> texts);

  /** Embeds a search query (some models add an instruction to queries). */
  float[] embedQuery(String query);
}
