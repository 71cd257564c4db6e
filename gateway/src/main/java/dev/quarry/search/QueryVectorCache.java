package dev.quarry.search;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;

/**
 * The most recently used query vectors, by tenant and query text: embedding a query costs more than
 * the SQL of the search, and users (and agents) repeat and page through the same queries. Vectors
 * are handed out as copies, so no caller can change a cached one.
 *
 * <p>Each tenant's queries are cached apart: a hit answers a few ms sooner than a miss, so a cache
 * shared by all tenants would let any tenant time its own searches to learn whether another had
 * searched a given text lately (say, the name of a company it is looking at).
 */
final class QueryVectorCache {
  private record Key(UUID tenant, String query) {}

  private final int capacity;
  private final Map<Key, float[]> vectors;

  QueryVectorCache(int capacity) {
    if (capacity < 0) {
      throw new IllegalArgumentException("query vector cache capacity must be >= 0, got " + capacity);
    }
    this.capacity = capacity;
    this.vectors = new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<Key, float[]> eldest) {
        return size() > QueryVectorCache.this.capacity;
      }
    };
  }

  /** The cached vector of the tenant's {@code query} (a copy), or null. */
  float[] peek(UUID tenant, String query) {
    synchronized (vectors) {
      float[] cached = vectors.get(new Key(tenant, query));
      return cached == null ? null : cached.clone();
    }
  }

  /**
   * The cached vector of the tenant's {@code query}, or the one {@code embed} computes (outside the
   * lock, so concurrent misses embed in parallel; two misses on one query both embed, harmlessly).
   */
  float[] get(UUID tenant, String query, Function<String, float[]> embed) {
    float[] cached = peek(tenant, query);
    if (cached != null) {
      return cached;
    }
    float[] computed = embed.apply(query);
    if (capacity > 0) {
      synchronized (vectors) {
        vectors.put(new Key(tenant, query), computed.clone());
      }
    }
    return computed;
  }

  /** Drops the tenant's queries (it was deleted). */
  void forget(UUID tenant) {
    synchronized (vectors) {
      vectors.keySet().removeIf(k -> k.tenant().equals(tenant));
    }
  }

  int size() {
    synchronized (vectors) {
      return vectors.size();
    }
  }
}
