package dev.quarry.sandbox;

import io.vertx.core.json.JsonObject;

/**
 * Why a cell did not succeed: the Python exception type, or one the gateway itself produces
 * ({@link #TIMEOUT}, {@link #CANCELLED}, {@link #OUT_OF_MEMORY}, {@link #SANDBOX_CRASHED},
 * {@link #SANDBOX_UNAVAILABLE}, {@link #TENANT_DELETED}, {@link #SANDBOX_STALLED}).
 */
public record CellError(String type, String message, String traceback) {

  public static final String TIMEOUT = "Timeout";
  public static final String CANCELLED = "Cancelled";
  public static final String OUT_OF_MEMORY = "OutOfMemory";
  public static final String SANDBOX_CRASHED = "SandboxCrashed";
  public static final String SANDBOX_UNAVAILABLE = "SandboxUnavailable";
  /** The sandbox's tenant was deleted: its sandboxes went at once, whatever ran in them. */
  public static final String TENANT_DELETED = "TenantDeleted";
  /** The runner left the gateway's replies unread for QUARRY_SANDBOX_STALL_MS; its sandbox was killed. */
  public static final String SANDBOX_STALLED = "SandboxStalled";

  public CellError {
    message = message == null ? "" : message;
    traceback = traceback == null ? "" : traceback;
  }

  public JsonObject toJson() {
    return new JsonObject().put("type", type).put("message", message).put("traceback", traceback);
  }
}
