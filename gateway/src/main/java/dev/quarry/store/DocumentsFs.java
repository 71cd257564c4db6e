package dev.quarry.store;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.nio.file.Path;
import java.util.UUID;

/**
 * The {@code /documents} filesystem of CONTRACT.md, per tenant, materialised from PostgreSQL under
 * {@code root/{tenant_id}/}. A cache: safe to delete, rebuilt from the database at any time.
 */
public final class DocumentsFs {
  private final Vertx vertx;
  private final Pool pool;
  private final Path root;

  public DocumentsFs(Vertx vertx, Pool pool, Path root) {
    this.vertx = vertx;
    this.pool = pool;
    this.root = root;
  }

  /** The tenant's directory (what a sandbox mounts at /documents). */
  public Path tenantDir(UUID tenantId) {
    return root.resolve(tenantId.toString());
  }

  /** Brings the tenant's directory up to date with the database, writing only what changed. */
  public Future<Path> sync(UUID tenantId) {
    throw new UnsupportedOperationException("being built on branch 'pipeline'");
  }
}
