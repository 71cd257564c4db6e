package dev.quarry.agent;

/**
 * The model endpoint could not give an answer. {@link #type()} is what the analysis records as its
 * error type: RateLimited, QuotaExceeded, ModelUnavailable, ModelRejected, OutOfTime or Cancelled.
 */
public final class ModelFailure extends RuntimeException {
  private final String type;

  public ModelFailure(String type, String message) {
    super(message, null, false, false);
    this.type = type;
  }

  public String type() {
    return type;
  }
}
