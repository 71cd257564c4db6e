package dev.quarry.search;

import dev.quarry.ops.Config;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.util.List;
import java.util.UUID;

/** Hybrid retrieval (vector + BM25 full-text, fused by reciprocal rank) with context expansion. */
public final class SearchService {
  private final Vertx vertx;
  private final Pool pool;
  private final Embedder embedder;
  private final Config config;

  public SearchService(Vertx vertx, Pool pool, Embedder embedder, Config config) {
    this.vertx = vertx;
    this.pool = pool;
    this.embedder = embedder;
    this.config = config;
  }

  /** Fails with IllegalArgumentException (message names the problem) for a bad query or limit. */
  public Future<List<SearchHit>> search(UUID tenantId, SearchRequest request) {
    throw new UnsupportedOperationException("search: being built on branch 'search'");
  }
}
