package dev.quarry.sandbox;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.util.UUID;
import java.util.function.Function;

/**
 * Owns every sandbox of the gateway: the launcher, the warm pool, the reaper and every open
 * session. {@link #close()} (gateway shutdown) closes them all.
 */
public final class SandboxService {

  /**
   * @param documentsDir the tenant's up-to-date documents directory on the host (for example
   *                     {@code DocumentsFs::sync}), mounted read-only at /documents
   */
  public SandboxService(Vertx vertx, SandboxSettings settings, Function<UUID, Future<Path>> documentsDir) {
    throw new UnsupportedOperationException("not yet");
  }

  /** Reaps leftovers of earlier runs and starts the periodic reaper. */
  public Future<Void> start() {
    throw new UnsupportedOperationException("not yet");
  }

  /** A live session for the tenant, its runner Ready; a pooled sandbox when the scope is ALL. */
  public Future<SandboxSession> open(UUID tenantId, Scope scope, Callbacks callbacks) {
    throw new UnsupportedOperationException("not yet");
  }

  /** Closes every session and pooled sandbox and stops the reaper. */
  public Future<Void> close() {
    throw new UnsupportedOperationException("not yet");
  }

  /** Sessions open now. */
  public int active() {
    throw new UnsupportedOperationException("not yet");
  }

  public SandboxSettings settings() {
    throw new UnsupportedOperationException("not yet");
  }
}
