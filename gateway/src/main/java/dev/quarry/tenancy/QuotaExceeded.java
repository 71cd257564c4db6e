package dev.quarry.tenancy;

import dev.quarry.config.Quota;

/** A tenant is over one of its quotas: the API answers 429 with {@code Retry-After}. */
public final class QuotaExceeded extends RuntimeException {
  private final Quota quota;
  private final long retryAfterSeconds;
  private final long limit;

  public QuotaExceeded(Quota quota, long limit, long retryAfterSeconds, String detail) {
    super("quota " + quota.wireName() + " exceeded (limit " + limit + "): " + detail, null, false, false);
    this.quota = quota;
    this.limit = limit;
    this.retryAfterSeconds = Math.max(1, retryAfterSeconds);
  }

  public Quota quota() {
    return quota;
  }

  public long limit() {
    return limit;
  }

  public long retryAfterSeconds() {
    return retryAfterSeconds;
  }
}
