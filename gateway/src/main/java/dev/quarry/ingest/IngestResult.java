package dev.quarry.ingest;

import java.util.Map;
import java.util.UUID;

/**
 * What an ingest did. {@code undecodableChars}: characters dropped as undecodable, by the converter
 * (a PDF's glyphs without a mapping) and by {@link TextHygiene} (0 for an unchanged document:
 * nothing was converted); {@code undecodablePages}: the same by 1-based page, pages with none left
 * out (empty for sources without pages).
 */
public record IngestResult(
    UUID documentId, Status status, String title, String sourceType, int itemCount, int chunkCount,
    int undecodableChars, Map<Integer, Integer> undecodablePages) {

  public IngestResult(UUID documentId, Status status, String title, String sourceType,
      int itemCount, int chunkCount, int undecodableChars) {
    this(documentId, status, title, sourceType, itemCount, chunkCount, undecodableChars, Map.of());
  }

  public IngestResult {
    undecodablePages = Map.copyOf(undecodablePages);
  }

  public enum Status {
    /** A new document. */
    CREATED,
    /** The uri's document already held the same bytes: nothing was written. */
    UNCHANGED,
    /** A changed source with a known uri replaced the old version atomically. */
    REPLACED
  }
}
