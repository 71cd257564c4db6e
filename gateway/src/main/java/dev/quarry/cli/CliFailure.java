package dev.quarry.cli;

/** A failure the user can act on: printed as one line, no stack trace. */
final class CliFailure extends RuntimeException {
  CliFailure(String message) {
    super(message, null, false, false);
  }
}
