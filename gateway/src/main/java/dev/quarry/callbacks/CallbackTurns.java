package dev.quarry.callbacks;

import dev.quarry.sandbox.CallbackFailure;
import dev.quarry.tenancy.QuotaExceeded;
import dev.quarry.tenancy.Quotas;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;

/**
 * A tenant's {@code callbacks_per_minute}: every {@code search}, {@code list_documents} and
 * {@code llm} of its sandboxes (executions, analyses and replays alike) takes a turn in it after its
 * own checks and budgets, before any work. Past the rate a call waits its turn, first come first
 * served, so the code just runs slower; one whose turn would come after its cell's wall time is
 * refused at once as {@code LimitExceeded} naming the quota, and counts nothing (decision 0031).
 */
public final class CallbackTurns {
  private final Vertx vertx;
  private final Quotas quotas;

  private CallbackTurns(Vertx vertx, Quotas quotas) {
    this.vertx = vertx;
    this.quotas = quotas;
  }

  public static CallbackTurns of(Vertx vertx, Quotas quotas) {
    return new CallbackTurns(java.util.Objects.requireNonNull(vertx, "vertx"),
        java.util.Objects.requireNonNull(quotas, "quotas"));
  }

  /** For a part run without tenants (a benchmark of the sandbox alone, argument checks): every call at once. */
  public static CallbackTurns unmetered() {
    return new CallbackTurns(null, null);
  }

  /**
   * Completes when the call's turn has come: at once within the tenant's rate, else after its wait.
   * Fails with a {@link CallbackFailure} ({@code LimitExceeded}) when its turn would come after
   * {@code deadline}, or as the quotas' own failure when they cannot be read.
   */
  public Future<Void> take(UUID tenantId, Instant deadline) {
    if (quotas == null) {
      return Future.succeededFuture();
    }
    long maxWaitMs;
    try {
      maxWaitMs = Math.max(0, Duration.between(Instant.now(), deadline).toMillis());
    } catch (ArithmeticException e) {
      maxWaitMs = Long.MAX_VALUE; // no deadline to speak of (Instant.MAX)
    }
    return quotas.reserveCallback(tenantId, maxWaitMs)
        .recover(e -> Future.failedFuture(e instanceof QuotaExceeded q
            ? new CallbackFailure("LimitExceeded", q.getMessage()) : e))
        .compose(waitMs -> {
          if (waitMs <= 0) {
            return Future.succeededFuture();
          }
          Promise<Void> turn = Promise.promise();
          vertx.setTimer(waitMs, t -> turn.complete());
          return turn.future();
        });
  }
}
