package dev.quarry.bench;

import dev.quarry.config.Config;
import dev.quarry.search.Embedder;
import dev.quarry.search.Fusion;
import dev.quarry.search.RankedChunk;
import dev.quarry.search.SearchMode;
import dev.quarry.search.SearchService;
import dev.quarry.tenancy.Tenants;
import java.util.ArrayList;
import java.util.List;
import dev.quarry.store.Database;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;

/** Quarry's search side on a bench database, in process: Vert.x, the pool and SearchService. */
public final class QuarryStack implements AutoCloseable {
  private final Vertx vertx;
  private final Pool pool;
  private final SearchService search;

  public QuarryStack(Config config, Embedder embedder) throws Exception {
    this.vertx = Vertx.vertx();
    this.pool = Database.pool(vertx, config);
    this.search = new SearchService(vertx, pool, embedder, config);
    // Builds the HNSW index on the loaded rows, as a gateway start-up does.
    Pool owner = Database.ownerPool(vertx, config);
    try {
      search.prepare(owner).toCompletionStage().toCompletableFuture().get();
    } finally {
      owner.close().toCompletionStage().toCompletableFuture().get();
    }
  }

  /** One mode's ranking of a query as the collection's document ids with Quarry's scores. */
  public List<Fusion.Scored<String>> scored(QuarryCorpus corpus, String query, SearchMode mode, int k)
      throws Exception {
    List<Fusion.Scored<String>> out = new ArrayList<>();
    for (RankedChunk r : search.rank(Tenants.DEFAULT, query, mode, k).toCompletionStage().toCompletableFuture().get()) {
      out.add(new Fusion.Scored<>(corpus.docId(r.chunkId()), r.score()));
    }
    return out;
  }

  public SearchService search() {
    return search;
  }

  public Vertx vertx() {
    return vertx;
  }

  public Pool pool() {
    return pool;
  }

  @Override
  public void close() throws Exception {
    pool.close().toCompletionStage().toCompletableFuture().get();
    vertx.close().toCompletionStage().toCompletableFuture().get();
  }
}
