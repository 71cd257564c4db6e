package dev.quarry.agent;

import dev.quarry.sandbox.Callbacks;
import dev.quarry.sandbox.SandboxSession;
import dev.quarry.sandbox.Scope;
import io.vertx.core.Future;
import java.util.UUID;

/** Opens an analysis' sandbox: {@code SandboxService::open} in the gateway. */
@FunctionalInterface
public interface SandboxOpener {
  /**
   * @param abandoned completes when the caller gives up (the analysis was cancelled): a request still
   *                  waiting for room then fails at once; {@code null} when it never gives up
   */
  Future<SandboxSession> open(UUID tenantId, Scope scope, Callbacks callbacks, Future<?> abandoned);
}
