package dev.quarry.support;

import dev.quarry.sandbox.MountPrivacy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The layout the tests' gateways run in (README, Security): the data and run directories each a
 * tmpfs of its own, so that a sandbox's mountinfo shows only the paths below them. Mounting needs
 * root, as {@code ./quarry test} runs; the memory a tmpfs holds is what the test writes into it.
 */
public final class PrivateMounts implements AutoCloseable {
  private final List<Path> mounted = new ArrayList<>();

  /**
   * Mounts a tmpfs on {@code dir} unless it already is on a filesystem of its own at or below one of
   * {@code boundaries} (or {@code dir} itself); what was in {@code dir} is hidden while it is mounted.
   */
  public Path ensure(Path dir, Path... boundaries) throws IOException {
    Files.createDirectories(dir);
    Path[] within = new Path[boundaries.length + 1];
    within[0] = dir;
    System.arraycopy(boundaries, 0, within, 1, boundaries.length);
    if (MountPrivacy.hostPathShown(dir, within) == null) {
      return dir;
    }
    run("mount", "-t", "tmpfs", "-o", "size=1g,mode=0755", "tmpfs", dir.toString());
    mounted.add(dir);
    return dir;
  }

  /** Unmounts what {@link #ensure} mounted, the last first. */
  @Override
  public void close() throws IOException {
    IOException failure = null;
    for (int i = mounted.size() - 1; i >= 0; i--) {
      try {
        // Lazy: a container the test failed to remove may still hold it; the kernel frees it after.
        run("umount", "-l", mounted.get(i).toString());
      } catch (IOException e) {
        failure = failure == null ? e : failure;
      }
    }
    mounted.clear();
    if (failure != null) {
      throw failure;
    }
  }

  private static void run(String... command) throws IOException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    try {
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IOException(String.join(" ", command) + " did not finish within 30 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted: " + String.join(" ", command), e);
    }
    String output = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    if (p.exitValue() != 0) {
      throw new IOException(String.join(" ", command) + " failed (exit " + p.exitValue() + ", the tests run as"
          + " root, as ./quarry test does): " + output.strip());
    }
  }
}
