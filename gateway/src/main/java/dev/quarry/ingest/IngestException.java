package dev.quarry.ingest;

/**
 * A source that cannot be ingested, for a reason the user can act on. The message always names the
 * file and the reason; it becomes a 4xx response or a CLI error line, never a stack trace.
 */
public final class IngestException extends Exception {
  /** Why, as a stable machine-readable code. */
  public enum Reason {
    EMPTY,
    UNSUPPORTED_TYPE,
    TOO_LARGE,
    CORRUPT,
    ENCRYPTED,
    ARCHIVE_BOMB,
    INVALID_ENCODING,
    MALFORMED,
    /** The source has content, but none of it is text (pictures only, undecodable text). */
    NO_TEXT_EXTRACTED,
    /** A field sent with the source (its uri, its title) is longer than Quarry keeps. */
    FIELD_TOO_LONG,
    /**
     * The gateway shut down (drained past its grace) before the document was stored: nothing of it
     * was stored, and sending it again (to another replica) is the remedy, not a change to it.
     */
    SHUTTING_DOWN,
    /**
     * This gateway's converter of the source's format no longer works (a library left unusable by
     * an error in its initialiser): the file is not at fault, and another replica (or this one,
     * restarted) converts it.
     */
    CONVERTER_UNAVAILABLE
  }

  private final Reason reason;
  private final String fileName;

  public IngestException(Reason reason, String fileName, String detail) {
    super(fileName + ": " + detail);
    this.reason = reason;
    this.fileName = fileName;
  }

  public IngestException(Reason reason, String fileName, String detail, Throwable cause) {
    super(fileName + ": " + detail, cause);
    this.reason = reason;
    this.fileName = fileName;
  }

  public Reason reason() {
    return reason;
  }

  public String fileName() {
    return fileName;
  }
}
