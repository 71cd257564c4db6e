package dev.quarry.search;

/** Which retrievers rank the chunks. */
public enum SearchMode {
  /** BM25 over the chunks' lexemes only. */
  FULL_TEXT,
  /** Cosine similarity of embeddings only (HNSW). */
  VECTOR,
  /** Both, fused by {@link Fusion#DEFAULT}: what {@code search} uses. */
  HYBRID
}
