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

  /**
   * The running cell called back into the gateway (heard as the call arrives, before it is served
   * or refused). Only a bounded preview of its arguments is given: a call may carry megabytes.
   */
  default void callback(CallbackType type, CallbackArguments arguments) {}

  /** The cell opened a file under /documents. */
  default void fileRead(String path) {}
}
