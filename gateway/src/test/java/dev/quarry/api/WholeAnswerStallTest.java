package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.support.Await;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * An answer written whole (a search's results, an execution's result) is watched until the kernel
 * has taken it ({@link SlowClient#watchWritten}), over real sockets: a client that reads nothing is
 * cut at the stall limit, one that reads slowly for longer than it gets every byte.
 */
@DisplayName("An answer written whole whose client reads nothing is cut; a slow reader is not")
class WholeAnswerStallTest {
  private static final Duration LIMIT = Duration.ofSeconds(2);
  private static final int SIZE = 12 << 20;
  private static final Vertx vertx = Vertx.vertx();

  @AfterAll
  static void stop() {
    vertx.close().await();
  }

  /** A server answering every request with SIZE bytes written whole and watched; whether each closed, by path. */
  private static HttpServer server(Map<String, io.vertx.core.Future<Void>> closed) {
    return vertx.createHttpServer().requestHandler(req -> {
      HttpServerResponse response = req.response();
      closed.put(req.path(), ((io.vertx.core.net.impl.ConnectionBase) req.connection()).closeFuture());
      var written = response.putHeader("Content-Type", "application/json").end("x".repeat(SIZE));
      SlowClient.watchWritten(response, req.connection(), written, vertx, LIMIT);
    }).listen(0, "127.0.0.1").await();
  }

  private static Socket ask(HttpServer server, String path) throws IOException {
    Socket socket = new Socket();
    socket.setReceiveBufferSize(4096);
    socket.connect(new InetSocketAddress("127.0.0.1", server.actualPort()));
    socket.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
    return socket;
  }

  @Test
  @DisplayName("the client that reads nothing is cut; the one reading for longer than the limit gets it all")
  void cutAndNot() throws Exception {
    Map<String, io.vertx.core.Future<Void>> closed = new ConcurrentHashMap<>();
    HttpServer server = server(closed);
    try (Socket stalled = ask(server, "/stalled"); Socket slow = ask(server, "/slow")) {
      Await.until(() -> closed.size() == 2, Duration.ofSeconds(10), "both answers written");
      long started = System.nanoTime();
      // The slow reader takes 12 MB at about 3 MB/s: about 4 s, twice the limit.
      InputStream in = slow.getInputStream();
      ByteArrayOutputStream got = new ByteArrayOutputStream();
      byte[] buf = new byte[32 * 1024];
      slow.setSoTimeout(30_000);
      int head = -1;
      while (head < 0 || got.size() - head < SIZE) {
        int n = in.read(buf);
        if (n < 0) {
          break;
        }
        got.write(buf, 0, n);
        if (head < 0) {
          int end = got.toString(StandardCharsets.ISO_8859_1).indexOf("\r\n\r\n");
          head = end < 0 ? -1 : end + 4;
        }
        long due = started + (long) got.size() * 1_000_000_000L / (3L << 20);
        long wait = due - System.nanoTime();
        if (wait > 0) {
          Thread.sleep(wait / 1_000_000);
        }
      }
      assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThan(LIMIT);
      assertThat(got.size() - head).isEqualTo(SIZE);
      Await.until(() -> closed.get("/stalled").isComplete(), LIMIT.multipliedBy(3), "the stalled client to be cut");
      assertThat(closed.get("/slow").isComplete()).isFalse();
    } finally {
      server.close().await();
    }
  }
}
