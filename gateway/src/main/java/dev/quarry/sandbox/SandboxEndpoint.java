package dev.quarry.sandbox;

import dev.quarry.proto.sandbox.v1.GatewayMessage;
import dev.quarry.proto.sandbox.v1.Ready;
import dev.quarry.proto.sandbox.v1.SandboxGrpcService;
import dev.quarry.proto.sandbox.v1.SandboxMessage;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.net.SocketAddress;
import io.vertx.grpc.common.GrpcStatus;
import io.vertx.grpc.server.GrpcServer;
import io.vertx.grpc.server.GrpcServerOptions;
import io.vertx.grpc.server.GrpcServerRequest;
import io.vertx.grpc.server.GrpcServerResponse;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.function.Consumer;

/**
 * The gateway's end of one sandbox: a gRPC server on the Unix socket in that sandbox's own run
 * directory, accepting exactly one Connect stream. Whatever arrives on it belongs to this sandbox
 * (and so to its tenant) because of the socket it came through, never because of what it says.
 */
final class SandboxEndpoint {
  /** As large as the runner's own limit: search results for a big limit can be a few megabytes. */
  static final int MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

  private final Vertx vertx;
  private final Promise<Ready> ready = Promise.promise();
  private final Promise<Void> ended = Promise.promise();
  private HttpServer server;
  private GrpcServerRequest<SandboxMessage, GatewayMessage> request;
  private GrpcServerResponse<SandboxMessage, GatewayMessage> response;
  private Consumer<SandboxMessage> handler = m -> {};
  private Consumer<Boolean> backlogHandler = full -> {};
  private boolean backlogged;
  private boolean readingPaused;
  private boolean closed;
  private volatile long readyNanos;

  SandboxEndpoint(Vertx vertx) {
    this.vertx = vertx;
  }

  /**
   * Starts serving on {@code socket}, which the sandbox's (non-root) user may connect to.
   *
   * @param owner the sandbox's {@code uid[:gid]}: when the gateway may give it the socket, only that
   *              user can connect (no other local user can pose as the runner before it dials)
   */
  Future<Void> listen(Path socket, String owner) {
    GrpcServer grpc = GrpcServer.server(vertx, new GrpcServerOptions().setMaxMessageSize(MAX_MESSAGE_BYTES));
    grpc.callHandler(SandboxGrpcService.Connect, this::connected);
    return vertx.createHttpServer()
        .requestHandler(grpc)
        .listen(SocketAddress.domainSocketAddress(socket.toString()))
        .compose(s -> {
          synchronized (this) {
            if (closed) {
              return s.close();
            }
            server = s;
          }
          try {
            restrict(socket, owner);
            return Future.succeededFuture();
          } catch (IOException e) {
            return s.close().transform(x -> Future.failedFuture(e));
          }
        });
  }

  /** Connecting to a Unix socket needs write permission on it; the container's user is not ours. */
  private static void restrict(Path socket, String owner) throws IOException {
    String[] ids = owner == null ? new String[0] : owner.split(":", 2);
    if (ids.length > 0 && ids[0].matches("\\d+")) {
      try {
        Files.setAttribute(socket, "unix:uid", Integer.parseInt(ids[0]));
        if (ids.length == 2 && ids[1].matches("\\d+")) {
          Files.setAttribute(socket, "unix:gid", Integer.parseInt(ids[1]));
        }
        Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-------"));
        return;
      } catch (IOException | UnsupportedOperationException | SecurityException e) {
        // A gateway that may not chown (not root) falls back to a socket anyone on the host can open.
      }
    }
    Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-rw-rw-"));
  }

  private void connected(GrpcServerRequest<SandboxMessage, GatewayMessage> request) {
    synchronized (this) {
      if (response != null || closed) {
        // One stream per sandbox: a second one is refused rather than allowed to steal cells.
        request.response().status(GrpcStatus.ALREADY_EXISTS).end();
        return;
      }
      this.request = request;
      response = request.response();
    }
    request.handler(this::received);
    request.endHandler(v -> end(null));
    request.exceptionHandler(this::end);
    request.connection().closeHandler(v -> end(null));
    response.exceptionHandler(this::end);
  }

  private void received(SandboxMessage message) {
    if (!ready.future().isComplete()) {
      if (message.getKindCase() == SandboxMessage.KindCase.READY) {
        readyNanos = System.nanoTime();
        ready.tryComplete(message.getReady());
      } else {
        ready.tryFail(new IllegalStateException("the runner sent " + message.getKindCase() + " before Ready"));
        end(null);
      }
      return;
    }
    Consumer<SandboxMessage> h;
    synchronized (this) {
      h = handler;
    }
    h.accept(message);
  }

  private void end(Throwable cause) {
    ready.tryFail(new IllegalStateException("the runner's stream ended before Ready"
        + (cause == null ? "" : ": " + cause.getMessage())));
    ended.tryComplete();
  }

  /** Completes when the runner said Ready; fails when the stream ended first. */
  Future<Ready> ready() {
    return ready.future();
  }

  /** When {@link #ready()} completed, in {@link System#nanoTime()}. */
  long readyNanos() {
    return readyNanos;
  }

  /** Completes when the stream ended, for whatever reason. */
  Future<Void> ended() {
    return ended.future();
  }

  boolean isEnded() {
    return ended.future().isComplete();
  }

  /** Who gets the messages after Ready. */
  synchronized void onMessage(Consumer<SandboxMessage> h) {
    handler = h;
  }

  /**
   * Who hears that the stream to the runner is full ({@code true}: the runner does not read what
   * the gateway sends, so HTTP/2 flow control holds it back) and drained again ({@code false}).
   */
  synchronized void onBacklog(Consumer<Boolean> h) {
    backlogHandler = h;
  }

  /**
   * Sends one message; a stream that ended drops it (the session learns of the end separately).
   * Once the write queue is full the backlog handler hears of it, and the sender is expected to stop
   * producing; what it still sends is queued until the runner reads or the stream ends.
   */
  void send(GatewayMessage message) {
    GrpcServerResponse<SandboxMessage, GatewayMessage> r;
    synchronized (this) {
      r = closed || isEnded() ? null : response;
    }
    if (r == null) {
      return;
    }
    r.write(message);
    Consumer<Boolean> h;
    synchronized (this) {
      if (backlogged || !r.writeQueueFull()) {
        return;
      }
      backlogged = true;
      h = backlogHandler;
    }
    r.drainHandler(v -> drained());
    h.accept(true);
    if (!r.writeQueueFull()) {
      drained(); // it drained before the handler was in place
    }
  }

  private void drained() {
    Consumer<Boolean> h;
    synchronized (this) {
      if (!backlogged) {
        return;
      }
      backlogged = false;
      h = backlogHandler;
    }
    h.accept(false);
  }

  /** Stops reading what the runner sends (flow control then holds its sends) until {@link #resumeReading}. */
  void pauseReading() {
    GrpcServerRequest<SandboxMessage, GatewayMessage> r;
    synchronized (this) {
      if (readingPaused || request == null) {
        return;
      }
      readingPaused = true;
      r = request;
    }
    if (!isEnded()) {
      r.pause();
    }
  }

  void resumeReading() {
    GrpcServerRequest<SandboxMessage, GatewayMessage> r;
    synchronized (this) {
      if (!readingPaused || request == null) {
        return;
      }
      readingPaused = false;
      r = request;
    }
    if (isEnded()) {
      return; // nothing more to read
    }
    try {
      r.resume();
    } catch (IllegalStateException e) {
      // The runner's side ended meanwhile ("request has already been read"): nothing to resume.
    }
  }

  /** Ends the stream and stops listening. Idempotent. */
  Future<Void> close() {
    GrpcServerResponse<SandboxMessage, GatewayMessage> r;
    HttpServer s;
    synchronized (this) {
      if (closed) {
        return Future.succeededFuture();
      }
      closed = true;
      r = response;
      s = server;
    }
    boolean streamAlive = !isEnded();
    end(null);
    if (r != null && streamAlive) {
      try {
        r.end();
      } catch (RuntimeException e) {
        // The stream broke meanwhile: nothing left to end.
      }
    }
    return s == null ? Future.succeededFuture() : s.close();
  }
}
