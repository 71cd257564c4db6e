package dev.quarry.sandbox;

import java.util.Set;
import java.util.UUID;

/**
 * Which of the tenant's documents a sandbox sees: through /documents, list_documents and search.
 * Empty means the whole tenant ({@link #ALL}). A scoped sandbox gets its own /documents directory
 * and never comes from the warm pool.
 */
public record Scope(Set<UUID> documentIds) {

  public static final Scope ALL = new Scope(Set.of());

  public Scope {
    documentIds = Set.copyOf(documentIds);
  }

  public boolean isAll() {
    return documentIds.isEmpty();
  }

  /** Whether the document is visible in this scope. */
  public boolean includes(UUID documentId) {
    return documentIds.isEmpty() || documentIds.contains(documentId);
  }
}
