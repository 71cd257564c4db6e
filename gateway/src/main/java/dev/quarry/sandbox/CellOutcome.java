package dev.quarry.sandbox;

import dev.quarry.proto.sandbox.v1.CellStatus;
import io.vertx.core.json.JsonObject;

/**
 * How one cell ended.
 *
 * @param stdout     what it printed, with the REPL-style repr of its last expression appended
 * @param error      null when the cell succeeded
 * @param truncated  output was cut at the cell's max output
 */
public record CellOutcome(CellStatus status, String stdout, String stderr, CellError error,
    boolean truncated, long durationMs) {

  public boolean success() {
    return status == CellStatus.CELL_STATUS_OK && error == null;
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
