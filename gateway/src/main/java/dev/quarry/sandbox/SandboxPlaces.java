package dev.quarry.sandbox;

import io.vertx.core.Future;
import java.util.UUID;

/**
 * A tenant's places in its {@code concurrent_sandboxes} quota, counted across the gateway's
 * replicas (the tenancy part's, handed in by the wiring). A replica's own bounds, its capacity and a
 * tenant's share of it, stay with {@link SandboxService}.
 */
@FunctionalInterface
public interface SandboxPlaces {
  /**
   * A place for one sandbox of the tenant, given back by running the action it completes with;
   * fails with {@link SandboxQuotaExceeded} when the tenant holds its quota already.
   */
  Future<Runnable> take(UUID tenant);

  /** No bound beyond the replica's own (a gateway without tenancy: tests of the sandboxes alone). */
  SandboxPlaces UNBOUNDED = tenant -> Future.succeededFuture(() -> { });
}
