package dev.quarry.sandbox;

/**
 * A callback failure meant for the code: raised in the cell as the Python exception {@link #type()}
 * (the runner allows "ValueError", "LimitExceeded", "RuntimeError"... and maps anything else to
 * RuntimeError) with {@link #message()}, which must be safe to show to the code and the model.
 */
public final class CallbackFailure extends RuntimeException {
  private final String type;

  public CallbackFailure(String type, String message) {
    super(message, null, false, false);
    this.type = type;
  }

  public String type() {
    return type;
  }

  public String message() {
    return getMessage();
  }

  public static CallbackFailure valueError(String message) {
    return new CallbackFailure("ValueError", message);
  }

  public static CallbackFailure runtimeError(String message) {
    return new CallbackFailure("RuntimeError", message);
  }
}
