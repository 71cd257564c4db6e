package dev.quarry.ingest;

import java.util.UUID;

/** What an ingest did. */
public record IngestResult(
    UUID documentId, Status status, String title, String sourceType, int itemCount, int chunkCount) {

  public enum Status {
    /** A new document. */
    CREATED,
    /** The same bytes were already there: nothing was written. */
    UNCHANGED,
    /** A changed source with a known uri replaced the old version atomically. */
    REPLACED
  }
}
