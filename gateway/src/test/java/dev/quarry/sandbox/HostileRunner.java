package dev.quarry.sandbox;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * An image whose runner is hostile (src/test/resources/hostile-runner): it speaks the real protocol
 * over the real socket, but floods callbacks, holds its sandbox or stops reading its stream when a
 * cell asks it to, as code that escaped the language could. Built once per test JVM on top of
 * {@link RunnerImage}, under that tag plus {@code -hostile}.
 */
public final class HostileRunner {
  public static final String TAG = RunnerImage.TAG + "-hostile";
  private static boolean built;

  private HostileRunner() {}

  public static synchronized String ensure() {
    if (built) {
      return TAG;
    }
    String runner = RunnerImage.ensure();
    try {
      Path context = Files.createTempDirectory("hostile-runner");
      for (String name : new String[] {"Dockerfile", "hostile_runner.py"}) {
        try (InputStream in = HostileRunner.class.getResourceAsStream("/hostile-runner/" + name)) {
          if (in == null) {
            throw new IllegalStateException("test resource hostile-runner/" + name + " is missing");
          }
          Files.copy(in, context.resolve(name));
        }
      }
      Path log = Files.createTempFile("hostile-runner", ".log");
      Process p = new ProcessBuilder("docker", "build", "-q", "--build-arg", "RUNNER_IMAGE=" + runner, "-t", TAG, ".")
          .directory(context.toFile()).redirectErrorStream(true).redirectOutput(log.toFile()).start();
      if (!p.waitFor(5, TimeUnit.MINUTES)) {
        p.destroyForcibly();
        throw new IllegalStateException("docker build of the hostile runner did not finish in 5 minutes");
      }
      String output = Files.readString(log);
      Files.delete(log);
      try (var files = Files.list(context)) {
        for (Path f : files.toList()) {
          Files.delete(f);
        }
      }
      Files.delete(context);
      if (p.exitValue() != 0) {
        throw new IllegalStateException("docker build of the hostile runner failed:\n" + output);
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot build the hostile runner image", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while building the hostile runner image", e);
    }
    built = true;
    return TAG;
  }
}
