package dev.quarry.sandbox;

/**
 * A Docker operation on a sandbox failed. {@link #reason()} says how, so callers can tell a
 * missing image (a setup problem) from an unreachable engine (retry later) from a container that
 * is already gone (often fine: removal is idempotent).
 */
public final class ContainerException extends RuntimeException {

  public enum Reason {
    /** The sandbox image is not in the engine: build it (sandbox-image/build-base.sh, the Dockerfile). */
    IMAGE_MISSING,
    /** The Docker engine could not be reached at DOCKER_HOST. */
    ENGINE_UNREACHABLE,
    /** The container does not exist (any more). */
    NOT_FOUND,
    /** The engine refused the request as invalid (bad limits, bad mount, ...). */
    REJECTED,
    /** The container is in a state that forbids the operation (not running, being removed). */
    CONFLICT,
    /** The container exited before it became ready. */
    EXITED,
    /** Any other engine error. */
    ENGINE_ERROR,
    /** The per-sandbox host directory could not be created or removed. */
    HOST_IO
  }

  private final Reason reason;

  public ContainerException(Reason reason, String message, Throwable cause) {
    super(message, cause);
    this.reason = reason;
  }

  public Reason reason() {
    return reason;
  }
}
