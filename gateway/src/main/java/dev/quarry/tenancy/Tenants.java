package dev.quarry.tenancy;

import java.util.UUID;

/**
 * Well-known tenants. The default tenant exists in every database (V1) so that a single-user
 * install has somewhere to put its documents: an admin gives it a key like any other tenant's
 * ({@code quarry admin keys create 00000000-0000-0000-0000-000000000001}, which the demo does).
 */
public final class Tenants {
  public static final UUID DEFAULT = UUID.fromString("00000000-0000-0000-0000-000000000001");

  private Tenants() {}
}
