package dev.quarry.callbacks;

import dev.quarry.tenancy.Quotas;
import io.vertx.core.Future;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A tenant's daily model tokens ({@code model_tokens_per_day}), the one account every model call
 * is asked of and counted in: each {@code llm()} of an execution, an analysis or a replay (through
 * {@link TenantCallbacks}), and each of an analysis' own model turns.
 */
public final class TokenAccount {
  private static final Logger log = LoggerFactory.getLogger(TokenAccount.class);
  private final Quotas quotas;

  /** @param quotas the tenant quotas; null for an account that never refuses and counts nothing */
  private TokenAccount(Quotas quotas) {
    this.quotas = quotas;
  }

  public static TokenAccount of(Quotas quotas) {
    return new TokenAccount(java.util.Objects.requireNonNull(quotas, "quotas"));
  }

  /**
   * For a part run without tenants (a benchmark of the sandbox alone, a test of the callbacks'
   * argument checks): never refuses, counts nothing.
   */
  public static TokenAccount unmetered() {
    return new TokenAccount(null);
  }

  /** Succeeds while the tenant has tokens left today; fails with {@code QuotaExceeded} once they are spent. */
  public Future<Void> allowed(UUID tenantId) {
    return quotas == null ? Future.succeededFuture() : quotas.checkModelTokens(tenantId).mapEmpty();
  }

  /**
   * Counts tokens already used. Never fails: the call they paid for has happened, so a write that
   * does not go through is logged rather than turned into a failure of the call.
   */
  public Future<Void> used(UUID tenantId, long tokens) {
    if (quotas == null || tokens <= 0) {
      return Future.succeededFuture();
    }
    return quotas.recordModelTokens(tenantId, tokens).otherwise(e -> {
      log.warn("{} model tokens of tenant {} not recorded: {}", tokens, tenantId, e.toString());
      return null;
    });
  }
}
