package dev.quarry.ingest;

import java.util.UUID;

/**
 * What an ingest did. {@code undecodableChars}: characters {@link TextHygiene} dropped from the
 * converted text (0 for an unchanged document: nothing was converted).
 */
public record IngestResult(
    UUID documentId, Status status, String title, String sourceType, int itemCount, int chunkCount,
    int undecodableChars) {

  public enum Status {
    /** A new document. */
    CREATED,
    /** The same bytes were already there: nothing was written. */
    UNCHANGED,
    /** A changed source with a known uri replaced the old version atomically. */
    REPLACED
  }
}
