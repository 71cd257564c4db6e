package dev.quarry.search;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * The most recently used query vectors, by query text: embedding a query costs more than the SQL
 * of the search, and users (and agents) repeat and page through the same queries. Vectors are
 * handed out as copies, so no caller can change a cached one.
 */
final class QueryVectorCache {
  private final int capacity;
  private final Map<String, float[]> vectors;

  QueryVectorCache(int capacity) {
    if (capacity < 0) {
      throw new IllegalArgumentException("query vector cache capacity must be >= 0, got " + capacity);
    }
    this.capacity = capacity;
    this.vectors = new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, float[]> eldest) {
        return size() > QueryVectorCache.this.capacity;
      }
    };
  }

  /** The cached vector of {@code query} (a copy), or null. */
  float[] peek(String query) {
    synchronized (vectors) {
      float[] cached = vectors.get(query);
      return cached == null ? null : cached.clone();
    }
  }

  /**
   * The cached vector of {@code query}, or the one {@code embed} computes (outside the lock, so
   * concurrent misses embed in parallel; two misses on one query both embed, harmlessly).
   */
  float[] get(String query, Function<String, float[]> embed) {
    float[] cached = peek(query);
    if (cached != null) {
      return cached;
    }
    float[] computed = embed.apply(query);
    if (capacity > 0) {
      synchronized (vectors) {
        vectors.put(query, computed.clone());
      }
    }
    return computed;
  }

  int size() {
    synchronized (vectors) {
      return vectors.size();
    }
  }
}
