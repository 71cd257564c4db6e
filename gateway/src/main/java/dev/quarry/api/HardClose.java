package dev.quarry.api;

import io.vertx.core.http.HttpConnection;
import io.vertx.core.net.impl.ConnectionBase;

/**
 * Closing a connection now. Vert.x's own close (and a reset of an HTTP/1.1 response whose head is
 * out) first writes everything queued on it, which a client that reads nothing never lets happen:
 * the socket and its file descriptor then stay for good (red team R7-1). So does Netty's
 * {@code channel().close()}, which passes through Vert.x's handler in the pipeline and is made
 * graceful there. The channel's own close ({@code unsafe().close}) bypasses the pipeline: the socket
 * is closed at once and what was queued is dropped.
 */
public final class HardClose {
  private HardClose() {}

  public static void close(HttpConnection connection) {
    if (connection instanceof ConnectionBase base) {
      var channel = base.channel();
      channel.eventLoop().execute(() -> channel.unsafe().close(channel.voidPromise()));
    } else {
      connection.close();
    }
  }
}
