package dev.quarry.api;

/**
 * A failure the caller can act on, with its HTTP status and a stable code. Handlers pass it to
 * {@code ctx.fail(...)}; the one error handler in {@link ApiRoutes} turns it into the JSON body.
 * No stack trace: it is an answer, not a bug.
 */
public final class ApiError extends RuntimeException {
  private final int status;
  private final String code;

  public ApiError(int status, String code, String message) {
    super(message, null, false, false);
    this.status = status;
    this.code = code;
  }

  public static ApiError badRequest(String code, String message) {
    return new ApiError(400, code, message);
  }

  public static ApiError notFound(String message) {
    return new ApiError(404, "not_found", message);
  }

  public int status() {
    return status;
  }

  public String code() {
    return code;
  }
}
