package dev.quarry.bench;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.command.WaitContainerResultCallback;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.api.model.HostConfig;
import dev.quarry.sandbox.ContainerLauncher;
import dev.quarry.sandbox.SandboxLimits;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * The naive ways to run a cell with docker-java, for the sandbox benchmark to compare against: a
 * {@code docker run} per cell, and a {@code docker exec} per cell into one long-lived container.
 * Both use the sandbox image and the same hardening and limits as Quarry's containers, and run the
 * cell as {@code python3 -c CODE}: no validator, no persistent namespace, no callbacks; they are
 * the floor of what Docker costs, not a second implementation of Quarry.
 */
final class DockerBaselines implements AutoCloseable {
  static final String LABEL = "quarry.bench";
  private static final String USER = "10001:10001";
  private static final long CELL_TIMEOUT_SECONDS = 60;

  private final DockerClient docker;
  private final String image;
  private final SandboxLimits limits;
  private final String runId = UUID.randomUUID().toString().substring(0, 8);

  DockerBaselines(DockerClient docker, String image, SandboxLimits limits) {
    this.docker = docker;
    this.image = image;
    this.limits = limits;
    try {
      docker.inspectImageCmd(image).exec();
    } catch (NotFoundException e) {
      throw new IllegalStateException("sandbox image " + image + " is not in the Docker engine; build it with"
          + " `docker build -f sandbox-image/Dockerfile --build-arg BASE_IMAGE=$(sandbox-image/build-base.sh"
          + " --print-image) -t "
          + image + " .` or set QUARRY_SANDBOX_IMAGE", e);
    }
  }

  /** What one cell printed and how it exited. */
  record CellRun(int exitCode, String stdout, String stderr) {
    CellRun requireOk() {
      if (exitCode != 0) {
        throw new IllegalStateException("baseline cell exited " + exitCode + ": " + stderr);
      }
      return this;
    }
  }

  /** create + start a container running the cell, wait for it, read its logs, remove it. */
  CellRun dockerRun(String code) throws InterruptedException {
    String id = docker.createContainerCmd(image)
        .withName("quarry-bench-run-" + runId + "-" + UUID.randomUUID().toString().substring(0, 8))
        .withEntrypoint("python3", "-s", "-c")
        .withCmd(code)
        .withUser(USER)
        .withLabels(Map.of(LABEL, runId))
        .withNetworkDisabled(true)
        .withHostConfig(hardened())
        .exec().getId();
    try {
      docker.startContainerCmd(id).exec();
      int exit = docker.waitContainerCmd(id).exec(new WaitContainerResultCallback())
          .awaitStatusCode(CELL_TIMEOUT_SECONDS, TimeUnit.SECONDS);
      Output out = new Output();
      docker.logContainerCmd(id).withStdOut(true).withStdErr(true).withFollowStream(false)
          .exec(out).awaitCompletion(CELL_TIMEOUT_SECONDS, TimeUnit.SECONDS);
      return new CellRun(exit, out.stdout(), out.stderr());
    } finally {
      docker.removeContainerCmd(id).withForce(true).exec();
    }
  }

  /** A long-lived container (sleeping) to exec cells into. */
  LongLived startLongLived() {
    String id = docker.createContainerCmd(image)
        .withName("quarry-bench-exec-" + runId + "-" + UUID.randomUUID().toString().substring(0, 8))
        .withEntrypoint("sleep", "infinity")
        .withUser(USER)
        .withLabels(Map.of(LABEL, runId))
        .withNetworkDisabled(true)
        .withHostConfig(hardened().withInit(true))
        .exec().getId();
    try {
      docker.startContainerCmd(id).exec();
    } catch (RuntimeException e) {
      docker.removeContainerCmd(id).withForce(true).exec();
      throw e;
    }
    return new LongLived(id);
  }

  final class LongLived implements AutoCloseable {
    private final String containerId;

    private LongLived(String containerId) {
      this.containerId = containerId;
    }

    /** exec create + start (attached) + inspect for the exit code. */
    CellRun exec(String code) throws InterruptedException {
      String execId = docker.execCreateCmd(containerId)
          .withCmd("python3", "-s", "-c", code)
          .withUser(USER)
          .withAttachStdout(true)
          .withAttachStderr(true)
          .exec().getId();
      Output out = new Output();
      if (!docker.execStartCmd(execId).exec(out).awaitCompletion(CELL_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
        throw new IllegalStateException("exec did not finish within " + CELL_TIMEOUT_SECONDS + " s");
      }
      Long exit = docker.inspectExecCmd(execId).exec().getExitCodeLong();
      return new CellRun(exit == null ? -1 : exit.intValue(), out.stdout(), out.stderr());
    }

    @Override
    public void close() {
      docker.removeContainerCmd(containerId).withForce(true).exec();
    }
  }

  private HostConfig hardened() {
    return ContainerLauncher.lockedDown(limits);
  }

  /** Removes anything of this run still in the engine (a cell that threw half-way). */
  @Override
  public void close() {
    for (var c : docker.listContainersCmd().withShowAll(true).withLabelFilter(Map.of(LABEL, runId)).exec()) {
      docker.removeContainerCmd(c.getId()).withForce(true).exec();
    }
  }

  private static final class Output extends ResultCallback.Adapter<Frame> {
    private final StringBuilder stdout = new StringBuilder();
    private final StringBuilder stderr = new StringBuilder();

    @Override
    public synchronized void onNext(Frame frame) {
      String text = new String(frame.getPayload(), StandardCharsets.UTF_8);
      switch (frame.getStreamType()) {
        case STDERR -> stderr.append(text);
        default -> stdout.append(text);
      }
    }

    synchronized String stdout() {
      return stdout.toString();
    }

    synchronized String stderr() {
      return stderr.toString();
    }
  }
}
