package dev.quarry.sandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The real sandbox image with the runner of this checkout, built once per test JVM from
 * sandbox-image/Dockerfile on the base image (Docker's layer cache makes a rebuild of an unchanged
 * runner a matter of seconds).
 */
public final class RunnerImage {
  /**
   * QUARRY_TEST_SANDBOX_TAG lets checkouts that share one Docker engine (worktrees tested side by
   * side) build their own runner instead of overwriting each other's.
   */
  public static final String TAG =
      System.getenv().getOrDefault("QUARRY_TEST_SANDBOX_TAG", "quarry-sandbox:test");
  private static boolean built;

  private RunnerImage() {}

  public static synchronized String ensure() {
    if (built) {
      return TAG;
    }
    SandboxFixture.ensureBaseImage();
    Path root = Path.of("").toAbsolutePath();
    while (!Files.exists(root.resolve("sandbox-image/Dockerfile"))) {
      root = root.getParent();
      if (root == null) {
        throw new IllegalStateException("sandbox-image/Dockerfile not found above the working directory");
      }
    }
    try {
      Path log = Files.createTempFile("sandbox-image", ".log");
      Process p = new ProcessBuilder("docker", "build", "-q", "-f", "sandbox-image/Dockerfile",
          "--build-arg", "BASE_IMAGE=" + SandboxFixture.IMAGE, "-t", TAG, ".")
          .directory(root.toFile()).redirectErrorStream(true).redirectOutput(log.toFile()).start();
      if (!p.waitFor(10, TimeUnit.MINUTES)) {
        p.destroyForcibly();
        throw new IllegalStateException("docker build of the sandbox image did not finish in 10 minutes");
      }
      String output = Files.readString(log);
      Files.delete(log);
      if (p.exitValue() != 0) {
        throw new IllegalStateException("docker build of the sandbox image failed:\n" + output);
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot run docker build", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while building the sandbox image", e);
    }
    built = true;
    return TAG;
  }
}
