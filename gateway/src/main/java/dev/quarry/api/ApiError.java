package dev.quarry.api;

/**
 * A failure the caller can act on, with its HTTP status and a stable code. Handlers pass it to
 * {@code ctx.fail(...)}; the one error handler in {@link ApiRoutes} turns it into the JSON body.
 * No stack trace: it is an answer, not a bug.
 */
public final class ApiError extends RuntimeException {
  private final int status;
  private final String code;
  /** The request field at fault, for the OpenAI-compatible surface's {@code param}; may be null. */
  private final String param;
  /** The analysis an error is about, and how it ended; null for errors of the request itself. */
  private final String analysisId;
  private final String analysisError;

  public ApiError(int status, String code, String message) {
    this(status, code, message, null, null, null);
  }

  private ApiError(int status, String code, String message, String param, String analysisId, String analysisError) {
    super(message, null, false, false);
    this.status = status;
    this.code = code;
    this.param = param;
    this.analysisId = analysisId;
    this.analysisError = analysisError;
  }

  ApiError withParam(String param) {
    return new ApiError(status, code, getMessage(), param, analysisId, analysisError);
  }

  ApiError withAnalysis(String id, String errorType) {
    return new ApiError(status, code, getMessage(), param, id, errorType);
  }

  String param() {
    return param;
  }

  String analysisId() {
    return analysisId;
  }

  String analysisError() {
    return analysisError;
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
