package dev.quarry.ingest;

/**
 * What an ingest reports while it works, for a caller that shows progress on a long document. Called
 * in order, from the worker thread that converts and embeds; an implementation hands the news on
 * and returns at once.
 */
public interface IngestProgress {
  /** Reports nothing. */
  IngestProgress NONE = new IngestProgress() {};

  /** The document is converted and cut into {@code chunks}, which now go through the model. */
  default void converted(String sourceType, int items, int chunks) {}

  /** {@code done} of the document's {@code total} chunks are embedded. */
  default void embedded(int done, int total) {}
}
