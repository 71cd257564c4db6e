package dev.quarry.ingest;

import dev.quarry.ops.Config;
import dev.quarry.search.Embedder;
import dev.quarry.store.DocumentsFs;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.util.UUID;

/** convert → section tree → chunks → embeddings → one transaction in PostgreSQL. */
public final class IngestService {
  private final Vertx vertx;
  private final Pool pool;
  private final Embedder embedder;
  private final DocumentsFs documentsFs;
  private final Config config;

  public IngestService(Vertx vertx, Pool pool, Embedder embedder, DocumentsFs documentsFs, Config config) {
    this.vertx = vertx;
    this.pool = pool;
    this.embedder = embedder;
    this.documentsFs = documentsFs;
    this.config = config;
  }

  /** Fails with {@link IngestException} for bad input; nothing is stored then. */
  public Future<IngestResult> ingest(UUID tenantId, IngestRequest request) {
    throw new UnsupportedOperationException("ingest: being built on branch 'pipeline'");
  }
}
