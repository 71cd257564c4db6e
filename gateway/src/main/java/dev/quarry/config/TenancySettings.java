package dev.quarry.config;

import dev.quarry.config.Quota;
import java.util.EnumMap;
import java.util.Map;

/**
 * The admin token and the per-tenant quotas: for each quota the value a tenant gets unless an admin
 * sets its own, and the most an admin may set.
 *
 * @param adminToken {@code QUARRY_ADMIN_TOKEN}; empty turns the admin API off
 */
public record TenancySettings(String adminToken, Map<Quota, Long> defaults, Map<Quota, Long> maximums) {
  /** Shorter admin tokens are refused: the token guards every tenant's keys. */
  public static final int MIN_ADMIN_TOKEN_CHARS = 16;

  public TenancySettings {
    defaults = Map.copyOf(defaults);
    maximums = Map.copyOf(maximums);
    for (Quota q : Quota.values()) {
      if (!defaults.containsKey(q) || !maximums.containsKey(q)) {
        throw new IllegalArgumentException("quota " + q.wireName() + " needs a default and a maximum");
      }
    }
  }

  static TenancySettings read(Settings s) {
    String token = s.secret("QUARRY_ADMIN_TOKEN", "");
    if (!token.isEmpty() && token.length() < MIN_ADMIN_TOKEN_CHARS) {
      throw new InvalidSetting("QUARRY_ADMIN_TOKEN must be at least " + MIN_ADMIN_TOKEN_CHARS
          + " characters (or unset, which turns the admin API off)");
    }
    Map<Quota, Long> defaults = new EnumMap<>(Quota.class);
    Map<Quota, Long> maximums = new EnumMap<>(Quota.class);
    for (Quota q : Quota.values()) {
      long max = s.longInteger(q.envName() + "_MAX", q.builtInMaximum(), 1, q.hardLimit());
      long dflt = s.longInteger(q.envName(), Math.min(q.builtInDefault(), max), 1, max);
      defaults.put(q, dflt);
      maximums.put(q, max);
    }
    return new TenancySettings(token, defaults, maximums);
  }

  public TenancySettings withAdminToken(String token) {
    return new TenancySettings(token, defaults, maximums);
  }

  /** The same settings with one quota's default (raised to the maximum if it exceeds it). */
  public TenancySettings withDefault(Quota quota, long value) {
    Map<Quota, Long> d = new EnumMap<>(defaults);
    Map<Quota, Long> m = new EnumMap<>(maximums);
    d.put(quota, value);
    m.put(quota, Math.max(value, m.get(quota)));
    return new TenancySettings(adminToken, d, m);
  }

  public long defaultOf(Quota quota) {
    return defaults.get(quota);
  }

  public long maximumOf(Quota quota) {
    return maximums.get(quota);
  }
}
