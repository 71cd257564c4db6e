package dev.quarry.tenancy;

import java.util.Optional;
import java.util.UUID;

/**
 * What one replica tells the others about a tenant, as PostgreSQL notifications on one channel
 * ({@link dev.quarry.store.Notifications}), each sent in the transaction of the change it announces:
 * a deletion beginning (end its work now) and done (drop what is cached of it), keys revoked (drop
 * its cached keys), quotas changed (drop its cached limits). The gateway's wiring acts on them; a
 * missed one is caught by the polling that stays (the tenants' existence every few seconds, the key
 * cache's 10 s).
 */
public final class TenantEvents {
  public static final String CHANNEL = "quarry_tenants";

  /** What happened to which tenant. */
  public enum Kind { DELETING, DELETED, KEYS_REVOKED, QUOTAS_CHANGED }

  public record Event(Kind kind, UUID tenant) {}

  private TenantEvents() {}

  public static String deleting(UUID tenant) {
    return payload(Kind.DELETING, tenant);
  }

  public static String deleted(UUID tenant) {
    return payload(Kind.DELETED, tenant);
  }

  public static String keysRevoked(UUID tenant) {
    return payload(Kind.KEYS_REVOKED, tenant);
  }

  public static String quotasChanged(UUID tenant) {
    return payload(Kind.QUOTAS_CHANGED, tenant);
  }

  private static String payload(Kind kind, UUID tenant) {
    return kind.name().toLowerCase(java.util.Locale.ROOT) + " " + tenant;
  }

  /** The event a payload carries; empty for one this version does not know (a newer replica's). */
  public static Optional<Event> parse(String payload) {
    String[] parts = payload == null ? new String[0] : payload.split(" ");
    if (parts.length != 2) {
      return Optional.empty();
    }
    try {
      return Optional.of(new Event(Kind.valueOf(parts[0].toUpperCase(java.util.Locale.ROOT)), UUID.fromString(parts[1])));
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
  }
}
