package dev.quarry.tenancy;

/**
 * A rate as a token bucket: refilled continuously at {@code perMinute} tokens a minute, holding at
 * most {@code burst}, so a tenant may burst up to that and then runs at its rate.
 */
final class TokenBucket {
  private static final long MINUTE_MS = 60_000;
  private final long perMinute;
  private final long burst;
  private double tokens;
  private long lastMs;

  TokenBucket(long perMinute, long burst, long nowMs) {
    this.perMinute = perMinute;
    this.burst = Math.max(1, burst);
    this.tokens = this.burst;
    this.lastMs = nowMs;
  }

  long capacity() {
    return perMinute;
  }

  private void refill(long nowMs) {
    if (nowMs > lastMs) {
      tokens = Math.min(burst, tokens + (nowMs - lastMs) * (double) perMinute / MINUTE_MS);
      lastMs = nowMs;
    }
  }

  /**
   * Reserves the next token: 0 when there is one now, else the milliseconds until the one reserved
   * comes (the bucket goes into debt, so each later reservation comes after this one: first come,
   * first served). When that would be more than {@code maxWaitMs} away, reserves nothing and
   * answers -1.
   */
  synchronized long reserve(long nowMs, long maxWaitMs) {
    refill(nowMs);
    if (tokens >= 1) {
      tokens -= 1;
      return 0;
    }
    long wait = (long) Math.ceil((1 - tokens) * MINUTE_MS / perMinute);
    if (wait > maxWaitMs) {
      return -1;
    }
    tokens -= 1;
    return wait;
  }
}
