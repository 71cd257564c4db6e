package dev.quarry.tenancy;

import java.util.UUID;

/**
 * Tenants. Until API keys arrive every request runs as the default tenant, but every row already
 * carries a tenant id and every query filters by it.
 */
public final class Tenants {
  public static final UUID DEFAULT = UUID.fromString("00000000-0000-0000-0000-000000000001");

  private Tenants() {}
}
