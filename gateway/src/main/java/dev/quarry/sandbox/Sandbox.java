package dev.quarry.sandbox;

import java.nio.file.Path;
import java.time.Instant;
import java.util.UUID;

/**
 * One launched sandbox container.
 *
 * @param id          Quarry's id for it, also in the container name and the {@code quarry.sandbox.id} label
 * @param containerId the Docker container id
 * @param tenantId    the tenant whose documents are mounted; fixed for the container's life
 * @param runDir      host directory mounted read-write at {@code /run/quarry}, where the gateway's socket lives
 * @param createdAt   when the launch began
 */
public record Sandbox(String id, String containerId, UUID tenantId, Path runDir, Instant createdAt) {

  /** Where the gateway listens for this sandbox, on the host side of the {@code /run/quarry} mount. */
  public Path socketPath() {
    return runDir.resolve(ContainerLauncher.SOCKET_NAME);
  }
}
