package dev.quarry.store;

import dev.quarry.ingest.DocItem;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/** Reads and deletes documents of one tenant. Writes happen in IngestService's transaction. */
public final class DocumentStore {
  private final Pool pool;

  public DocumentStore(Pool pool) {
    this.pool = pool;
  }

  /** The tenant's documents, oldest first. */
  public Future<List<DocumentSummary>> list(UUID tenantId) {
    throw new UnsupportedOperationException("being built on branch 'pipeline'");
  }

  public Future<Optional<DocumentSummary>> get(UUID tenantId, UUID documentId) {
    throw new UnsupportedOperationException("being built on branch 'pipeline'");
  }

  /** True when a document was deleted (with its items and chunks). */
  public Future<Boolean> delete(UUID tenantId, UUID documentId) {
    throw new UnsupportedOperationException("being built on branch 'pipeline'");
  }

  /** Empty when the document does not exist for this tenant. */
  public Future<Optional<List<DocItem>>> items(UUID tenantId, UUID documentId) {
    throw new UnsupportedOperationException("being built on branch 'pipeline'");
  }

  public Future<Optional<JsonObject>> toc(UUID tenantId, UUID documentId) {
    throw new UnsupportedOperationException("being built on branch 'pipeline'");
  }

  public Future<Optional<String>> content(UUID tenantId, UUID documentId) {
    throw new UnsupportedOperationException("being built on branch 'pipeline'");
  }
}
