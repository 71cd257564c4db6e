package dev.quarry.tenancy;

import dev.quarry.config.Quota;

import java.util.Map;

/** One tenant's quotas in force: its own where an admin set them, the configured defaults elsewhere. */
public record TenantLimits(Map<Quota, Long> values) {
  public TenantLimits {
    values = Map.copyOf(values);
  }

  public long of(Quota quota) {
    return values.get(quota);
  }
}
