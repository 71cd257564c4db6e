package dev.quarry.sandbox;

/**
 * Every sandbox slot of this gateway stayed taken for as long as a request may wait
 * ({@code QUARRY_SANDBOX_MAX_ACTIVE}, {@code QUARRY_SANDBOX_WAIT_MS}). The caller should come back
 * later, or to another replica: the API answers 503 with {@code Retry-After}.
 */
public final class SandboxCapacityExhausted extends RuntimeException {
  private final int limit;
  private final long retryAfterSeconds;

  public SandboxCapacityExhausted(int limit, long waitedMs, long retryAfterSeconds) {
    super("all " + limit + " sandboxes of this gateway are in use (QUARRY_SANDBOX_MAX_ACTIVE) and none came free within "
        + waitedMs + " ms (QUARRY_SANDBOX_WAIT_MS); try again later", null, false, false);
    this.limit = limit;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  public int limit() {
    return limit;
  }

  public long retryAfterSeconds() {
    return retryAfterSeconds;
  }
}
