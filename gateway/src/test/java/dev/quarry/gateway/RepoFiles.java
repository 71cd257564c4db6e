package dev.quarry.gateway;

import java.nio.file.Files;
import java.nio.file.Path;

/** Files of the repository outside the gateway module (tests run with the module as working directory). */
final class RepoFiles {
  private RepoFiles() {}

  static Path root() {
    Path dir = Path.of("").toAbsolutePath();
    while (dir != null && !Files.isRegularFile(dir.resolve("quarry"))) {
      dir = dir.getParent();
    }
    if (dir == null) {
      throw new IllegalStateException("cannot find the repository root (the directory with ./quarry) above "
          + Path.of("").toAbsolutePath());
    }
    return dir;
  }
}
