package dev.quarry.sandbox;

import java.util.List;

/**
 * Limits and set-up of one cell.
 *
 * @param wallTimeMs          wall-clock time the cell may run
 * @param maxOutputChars      characters of output kept; the rest is dropped and flagged truncated
 * @param preloadDocumentIds  when not empty, the cell first gets a {@code documents} variable with these
 */
public record CellOptions(long wallTimeMs, long maxOutputChars, List<String> preloadDocumentIds) {

  public CellOptions {
    preloadDocumentIds = List.copyOf(preloadDocumentIds);
  }

  /** The configured default limits, no preloaded documents. */
  public static CellOptions defaults(SandboxSettings settings) {
    return new CellOptions(settings.limits().cellWallTime().toMillis(), settings.limits().outputChars(),
        List.of());
  }

  /**
   * Fails with an {@link IllegalArgumentException} naming the field when a value is not positive or
   * is above the configured maximum.
   */
  public CellOptions requireWithin(SandboxSettings settings) {
    long maxWall = settings.maxLimits().cellWallTime().toMillis();
    if (wallTimeMs < 1 || wallTimeMs > maxWall) {
      throw new IllegalArgumentException("wall_time_ms must be between 1 and " + maxWall + ", got " + wallTimeMs);
    }
    long maxOut = settings.maxLimits().outputChars();
    if (maxOutputChars < 1 || maxOutputChars > maxOut) {
      throw new IllegalArgumentException(
          "max_output_chars must be between 1 and " + maxOut + ", got " + maxOutputChars);
    }
    return this;
  }

  public CellOptions withPreload(List<String> documentIds) {
    return new CellOptions(wallTimeMs, maxOutputChars, documentIds);
  }
}
