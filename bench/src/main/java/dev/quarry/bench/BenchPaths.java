package dev.quarry.bench;

import java.nio.file.Files;
import java.nio.file.Path;

/** Where the repository, its shared data and the bench's scratch space are. */
public record BenchPaths(Path repoRoot, Path sharedData, Path work) {

  /**
   * The repository root is the working directory (or its parent when run from {@code bench/});
   * shared data comes from {@code -Dquarry.shared.dir}, {@code QUARRY_SHARED_DIR} or {@code ../shared}.
   */
  public static BenchPaths detect() {
    Path cwd = Path.of("").toAbsolutePath();
    Path root = Files.isDirectory(cwd.resolve("bench")) ? cwd
        : cwd.getFileName() != null && cwd.getFileName().toString().equals("bench") ? cwd.getParent() : cwd;
    String shared = System.getProperty("quarry.shared.dir");
    if (shared == null || shared.isBlank()) {
      shared = System.getenv().getOrDefault("QUARRY_SHARED_DIR", root.resolve("../shared").toString());
    }
    Path data = Path.of(shared).resolve("data").toAbsolutePath().normalize();
    if (!Files.isDirectory(data.resolve("retrieval"))) {
      throw new IllegalStateException("shared data not found at " + data
          + " (set -Dquarry.shared.dir or QUARRY_SHARED_DIR to the folder holding data/)");
    }
    return new BenchPaths(root, data, root.resolve("bench/target/bench-work"));
  }

  public Path retrieval() {
    return sharedData.resolve("retrieval");
  }

  public Path benchmarksFile() {
    return repoRoot.resolve("BENCHMARKS.md");
  }
}
