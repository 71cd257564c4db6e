package dev.quarry.search;

import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;

/**
 * A search within one tenant. {@code documentIds} narrows it to some documents (ids of other
 * tenants' documents match nothing); empty (or null) means all of the tenant's documents. The scope
 * is applied inside the retrieval, so a scoped search returns the best hits within the scope.
 */
public record SearchRequest(String query, int limit, Set<UUID> documentIds) {
  /**
   * Most documents one search may be scoped to: the ids travel as one array parameter and are
   * matched per candidate row; an analysis over more documents than this searches them all.
   */
  public static final int MAX_DOCUMENT_IDS = 1000;

  public SearchRequest {
    if (documentIds == null) {
      documentIds = Set.of();
    } else {
      // Not contains(null): immutable sets throw on it.
      if (documentIds.stream().anyMatch(Objects::isNull)) {
        throw new IllegalArgumentException("document_ids must not contain null");
      }
      if (documentIds.size() > MAX_DOCUMENT_IDS) {
        throw new IllegalArgumentException("document_ids has " + documentIds.size()
            + " ids; at most " + MAX_DOCUMENT_IDS + " are allowed");
      }
      // Copied in order (Set.copyOf would shuffle it), so a request reads back as it was made.
      documentIds = Collections.unmodifiableSet(new LinkedHashSet<>(documentIds));
    }
  }

  /** A search over all of the tenant's documents. */
  public SearchRequest(String query, int limit) {
    this(query, limit, Set.of());
  }
}
