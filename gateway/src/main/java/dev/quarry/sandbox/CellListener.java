package dev.quarry.sandbox;

import dev.quarry.proto.sandbox.v1.CallbackKind;
import dev.quarry.proto.sandbox.v1.OutputChannel;

/**
 * Hears what a running cell does, as it happens (for streaming and the audit log). Called on an
 * event loop: implementations must not block.
 */
public interface CellListener {

  CellListener NONE = new CellListener() {};

  /** A piece of printed output, in order. */
  default void output(OutputChannel channel, String text) {}

  /** The cell called back into the gateway. */
  default void callback(CallbackKind kind, String argumentsJson) {}

  /** The cell opened a file under /documents. */
  default void fileRead(String path) {}
}
