package dev.quarry.tenancy;

import java.time.OffsetDateTime;
import java.util.UUID;

/** A key as listings show it: never the key itself, which is only ever shown at creation. */
public record ApiKey(UUID id, UUID tenantId, String prefix, String name, OffsetDateTime createdAt,
    OffsetDateTime revokedAt) {}
