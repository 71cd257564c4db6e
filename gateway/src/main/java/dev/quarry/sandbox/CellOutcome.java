package dev.quarry.sandbox;

import io.vertx.core.json.JsonObject;

/**
 * How one cell ended.
 *
 * @param status     how it ended, in Quarry's words (the protocol's own enum stays in this package)
 * @param stdout     what it printed, with the REPL-style repr of its last expression appended
 * @param error      null when the cell succeeded
 * @param truncated  output was cut at the cell's max output
 */
public record CellOutcome(Status status, String stdout, String stderr, CellError error,
    boolean truncated, long durationMs) {

  /** How a cell ended: ran to the end, raised, ran out of time, was cancelled, or was killed with its sandbox. */
  public enum Status { OK, ERROR, TIMEOUT, CANCELLED, KILLED }

  public boolean success() {
    return status == Status.OK && error == null;
  }

  /** The tool result of docs/CONTRACT.md. */
  public JsonObject toToolResult() {
    return new JsonObject()
        .put("success", success())
        .put("stdout", stdout)
        .put("stderr", stderr)
        .put("error", error == null ? null : error.toJson())
        .put("truncated", truncated)
        .put("duration_ms", durationMs);
  }
}
