package dev.quarry.search;

import java.util.List;
import java.util.UUID;

/**
 * A search within one tenant. {@code documentIds} narrows it to some documents; null means all of
 * the tenant's documents.
 */
public record SearchRequest(String query, int limit, List<UUID> documentIds) {}
