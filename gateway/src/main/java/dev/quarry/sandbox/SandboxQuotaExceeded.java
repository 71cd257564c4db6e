package dev.quarry.sandbox;

/**
 * A tenant asked for a sandbox while it already holds as many as it may: its
 * {@code concurrent_sandboxes} quota across the replicas, or its share of this gateway's sandboxes
 * ({@code QUARRY_SANDBOX_TENANT_SHARE_PERCENT}). The API answers 429 with
 * {@code Retry-After}; the other tenants keep the rest of the slots.
 */
public final class SandboxQuotaExceeded extends RuntimeException {
  /** The quota's name, as the admin API and the error messages spell it. */
  public static final String QUOTA = "concurrent_sandboxes";
  private static final long RETRY_AFTER_SECONDS = 5;

  public SandboxQuotaExceeded(int quota, int share, int maxActive) {
    super("quota " + QUOTA + " exceeded (limit " + Math.min(quota, share) + "): the tenant already holds "
        + Math.min(quota, share) + " sandboxes on this gateway (its " + QUOTA + " quota is " + quota
        + (share == Integer.MAX_VALUE ? "" : "; one tenant may hold at most " + share + " of the gateway's "
            + maxActive + " sandboxes, QUARRY_SANDBOX_TENANT_SHARE_PERCENT")
        + "); wait for one of them to end", null, false, false);
  }

  /** The tenant holds its whole {@code concurrent_sandboxes} quota across the gateway's replicas. */
  public SandboxQuotaExceeded(long quota) {
    super("quota " + QUOTA + " exceeded (limit " + quota + "): the tenant already holds " + quota
        + " sandboxes across the gateway's replicas; wait for one of them to end", null, false, false);
  }

  public long retryAfterSeconds() {
    return RETRY_AFTER_SECONDS;
  }
}
