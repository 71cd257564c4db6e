package dev.quarry.sandbox;

import io.vertx.core.Future;
import java.util.UUID;

/**
 * One live sandbox bound to a tenant and a scope, running cells one at a time. Variables survive
 * from one cell to the next of the same session, never into another session.
 */
public interface SandboxSession {

  String id();

  UUID tenantId();

  Scope scope();

  /**
   * Runs one cell. The future never fails for what the code did (errors, timeouts, a dead sandbox
   * are outcomes); it fails with {@link IllegalStateException} when a cell is already running or
   * the session is closed.
   */
  Future<CellOutcome> execute(String code, CellOptions options, CellListener listener);

  /** Stops the running cell, if any; kills the sandbox when the runner does not stop it in time. */
  void cancel();

  /** Removes container, socket and directories. Idempotent. */
  Future<Void> close();
}
