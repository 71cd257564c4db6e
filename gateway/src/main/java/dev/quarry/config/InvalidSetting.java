package dev.quarry.config;

/**
 * The one error of configuration: a setting that is malformed, out of its bounds or inconsistent
 * with another. Its message names the variable (and the file, when the value came from one), so that
 * start-up can print it as it is and stop.
 */
public final class InvalidSetting extends RuntimeException {
  public InvalidSetting(String message) {
    super(message);
  }
}
