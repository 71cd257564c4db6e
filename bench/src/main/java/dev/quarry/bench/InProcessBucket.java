package dev.quarry.bench;

/**
 * The baseline of the cluster benchmark: the gateway's rate quota before issue 34, one token bucket
 * per tenant in each replica's memory (tenancy/TokenBucket at 8af36b7, kept here as it was).
 *
 * Requests per minute as a token bucket: {@code capacity} tokens, refilled continuously at
 * capacity per minute, so a tenant may burst up to its minute's worth and then runs at its rate.
 */
final class InProcessBucket {
  private static final long MINUTE_MS = 60_000;
  private final long capacity;
  private double tokens;
  private long lastMs;

  InProcessBucket(long capacity, long nowMs) {
    this.capacity = capacity;
    this.tokens = capacity;
    this.lastMs = nowMs;
  }

  long capacity() {
    return capacity;
  }

  /** Takes one token: 0 when there was one, else the milliseconds until there will be. */
  synchronized long take(long nowMs) {
    if (nowMs > lastMs) {
      tokens = Math.min(capacity, tokens + (nowMs - lastMs) * (double) capacity / MINUTE_MS);
      lastMs = nowMs;
    }
    if (tokens >= 1) {
      tokens -= 1;
      return 0;
    }
    return (long) Math.ceil((1 - tokens) * MINUTE_MS / capacity);
  }
}
