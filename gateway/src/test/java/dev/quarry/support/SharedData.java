package dev.quarry.support;

import java.nio.file.Files;
import java.nio.file.Path;

/** The real test material in {@code ../shared/data} (see its README). */
public final class SharedData {
  private SharedData() {}

  public static Path root() {
    String dir = System.getProperty("quarry.shared.dir");
    if (dir == null || dir.isBlank()) {
      dir = System.getenv().getOrDefault("QUARRY_SHARED_DIR", "../shared");
    }
    Path data = Path.of(dir).resolve("data").toAbsolutePath().normalize();
    if (!Files.isDirectory(data)) {
      throw new IllegalStateException("shared test data not found at " + data
          + " (set -Dquarry.shared.dir or QUARRY_SHARED_DIR)");
    }
    return data;
  }

  public static Path path(String relative) {
    return root().resolve(relative);
  }
}
