package dev.quarry.sandbox;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.Container;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * A real Docker engine with the base image, a gateway id of its own (so tests never touch other
 * sandboxes on the shared engine), a run root and two tenants' documents directories.
 */
final class SandboxFixture implements AutoCloseable {
  /**
   * The base image's name, as sandbox-image/build-base.sh derives it from its package list (so a
   * machine that has an older base, without a package the runner now needs, builds the new one).
   */
  static final String IMAGE = baseImageName();
  /** A command that keeps the container running without the runner (which is built elsewhere). */
  static final List<String> IDLE = List.of("sleep", "infinity");
  private static final Duration IMAGE_BUILD_WAIT = Duration.ofMinutes(15);

  final DockerClient docker;
  final String gatewayId = "test-" + UUID.randomUUID().toString().substring(0, 8);
  final Path root;
  final Path runRoot;
  final Path documentsRoot;
  final UUID tenantA = UUID.randomUUID();
  final UUID tenantB = UUID.randomUUID();

  SandboxFixture(Path tempDir) throws IOException {
    ensureBaseImage();
    docker = ContainerLauncher.connect(
        System.getenv().getOrDefault("DOCKER_HOST", SandboxSettings.DEFAULT_DOCKER_HOST));
    root = tempDir;
    runRoot = Files.createDirectories(root.resolve("run"));
    documentsRoot = Files.createDirectories(root.resolve("documents"));
    writeDocument(tenantA, "doc-a", "tenant A's report");
    writeDocument(tenantB, "doc-b", "CANARY-OTHER-TENANT");
    // The sandbox runs as nobody: the documents must be readable by others, like DocumentsFs's.
    openUp(root);
    openUp(documentsRoot);
  }

  SandboxSettings settings() {
    return new SandboxSettings(SandboxSettings.DEFAULT_DOCKER_HOST, IMAGE, IDLE, "", gatewayId, runRoot,
        SandboxLimits.DEFAULTS, SandboxLimits.MAXIMUMS, 2, Duration.ofMinutes(10), false);
  }

  ContainerLauncher launcher() {
    return new ContainerLauncher(docker, settings());
  }

  Path documents(UUID tenant) {
    return documentsRoot.resolve(tenant.toString());
  }

  /** Containers of this fixture's gateway still in the engine, running or not. */
  List<Container> containers() {
    return docker.listContainersCmd().withShowAll(true)
        .withLabelFilter(Map.of(ContainerLauncher.LABEL_GATEWAY, gatewayId)).exec();
  }

  /** Run directories of this fixture's gateway still on disk. */
  List<Path> runDirs() throws IOException {
    Path dir = runRoot.resolve(gatewayId);
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (var s = Files.list(dir)) {
      return s.toList();
    }
  }

  boolean exists(String containerId) {
    try {
      docker.inspectContainerCmd(containerId).exec();
      return true;
    } catch (NotFoundException e) {
      return false;
    }
  }

  @Override
  public void close() throws IOException {
    for (Container c : containers()) {
      docker.removeContainerCmd(c.getId()).withForce(true).exec();
    }
    docker.close();
  }

  private void writeDocument(UUID tenant, String docId, String content) throws IOException {
    Path dir = Files.createDirectories(documents(tenant).resolve(docId));
    Files.writeString(dir.resolve("content.txt"), content);
  }

  private static void openUp(Path dir) throws IOException {
    try (var s = Files.walk(dir)) {
      for (Path p : s.toList()) {
        Files.setPosixFilePermissions(p,
            PosixFilePermissions.fromString(Files.isDirectory(p) ? "rwxr-xr-x" : "rw-r--r--"));
      }
    }
  }

  /** Builds the base image with sandbox-image/build-base.sh when the engine does not have it. */
  static synchronized void ensureBaseImage() {
    try {
      Path script = locate("sandbox-image/build-base.sh");
      // Not inherited: surefire's forked JVM owns its stdout.
      Path log = Files.createTempFile("sandbox-base", ".log");
      Process p = new ProcessBuilder("bash", script.toString()).redirectErrorStream(true)
          .redirectOutput(log.toFile()).start();
      if (!p.waitFor(IMAGE_BUILD_WAIT.toSeconds(), TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException("sandbox-image/build-base.sh did not finish within " + IMAGE_BUILD_WAIT);
      }
      String output = Files.readString(log);
      Files.delete(log);
      if (p.exitValue() != 0) {
        throw new IllegalStateException("sandbox-image/build-base.sh failed with exit code " + p.exitValue()
            + ":\n" + output);
      }
      System.out.print(output);
    } catch (IOException e) {
      throw new IllegalStateException("cannot run sandbox-image/build-base.sh", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while building the sandbox base image", e);
    }
  }

  private static String baseImageName() {
    try {
      Process p = new ProcessBuilder("bash", locate("sandbox-image/build-base.sh").toString(), "--print-image")
          .redirectErrorStream(true).start();
      String name = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).strip();
      if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0 || name.isEmpty() || name.contains("\n")) {
        throw new IllegalStateException("sandbox-image/build-base.sh --print-image failed: " + name);
      }
      return name;
    } catch (IOException e) {
      throw new IllegalStateException("cannot run sandbox-image/build-base.sh --print-image", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while naming the sandbox base image", e);
    }
  }

  private static Path locate(String relative) {
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      if (Files.exists(dir.resolve(relative))) {
        return dir.resolve(relative);
      }
    }
    throw new IllegalStateException(relative + " not found above " + Path.of("").toAbsolutePath());
  }
}
