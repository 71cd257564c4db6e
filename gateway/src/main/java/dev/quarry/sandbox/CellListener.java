package dev.quarry.sandbox;

/**
 * Hears what a running cell does, as it happens (for streaming and the audit log). Called on an
 * event loop: implementations must not block.
 */
public interface CellListener {

  CellListener NONE = new CellListener() {};

  /** Where a piece of output was printed. */
  enum Stream {
    STDOUT, STDERR;

    /** As the API and the events name it. */
    public String wireName() {
      return this == STDERR ? "stderr" : "stdout";
    }
  }

  /** A piece of printed output, in order. */
  default void output(Stream stream, String text) {}

  /** The cell called back into the gateway. */
  default void callback(CallbackType type, String argumentsJson) {}

  /** The cell opened a file under /documents. */
  default void fileRead(String path) {}
}
