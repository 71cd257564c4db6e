package dev.quarry.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.api.TestGateway;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Connections that send no request are closed, and there is a cap on how many are open (red team
 * round 5, R5-6: 19,990 silent connections, no key needed, took every file descriptor).
 */
@DisplayName("Connections without a request under way are closed; open connections are capped")
class ConnectionGuardTest {

  private static Socket connect(TestGateway gateway) throws IOException {
    Socket s = new Socket("localhost", gateway.port());
    s.setSoTimeout(15_000);
    return s;
  }

  /** Reads until the server closes the connection; the bytes it sent before. */
  private static String readToClose(Socket s) throws IOException {
    InputStream in = s.getInputStream();
    StringBuilder out = new StringBuilder();
    byte[] buf = new byte[8192];
    for (int n; (n = in.read(buf)) >= 0; ) {
      out.append(new String(buf, 0, n, StandardCharsets.ISO_8859_1));
    }
    return out.toString();
  }

  @Test
  @DisplayName("a silent connection, one with half a request head, and a kept-alive one after its response"
      + " are closed once idle (QUARRY_HTTP_IDLE_SECONDS)")
  void idleConnectionsClose() throws Exception {
    try (TestGateway gateway = TestGateway.start(c -> c.withHttpIdleSeconds(1))) {
      try (Socket silent = connect(gateway); Socket half = connect(gateway); Socket kept = connect(gateway)) {
        half.getOutputStream().write("GET /healthz HTTP/1.1\r\nHost: localhost\r\n".getBytes(StandardCharsets.US_ASCII));
        kept.getOutputStream().write("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        long t0 = System.nanoTime();
        assertThat(readToClose(silent)).isEmpty();
        assertThat(readToClose(half)).isEmpty();
        assertThat(readToClose(kept)).startsWith("HTTP/1.1 200").contains("alive");
        assertThat((System.nanoTime() - t0) / 1e9).as("closed within seconds, not the socket's 15 s timeout")
            .isLessThan(10);
      }
    }
  }

  @Test
  @DisplayName("while the gateway drains (an ingest still running), a silent connection is still closed once idle")
  void idleConnectionsCloseWhileDraining() throws Exception {
    try (TestGateway gateway = TestGateway.start(c -> c.withHttpIdleSeconds(1))) {
      StringBuilder text = new StringBuilder("# Long\n\n");
      for (int i = 0; i < 80; i++) {
        text.append("## Section ").append(i).append("\n\n").append("The tide table of berth ").append(i)
            .append(" lists the hours the quay floods at spring tides. ".repeat(20)).append("\n\n");
      }
      var ingest = gateway.client().post("/v1/documents").timeout(300_000).sendJsonObject(new JsonObject()
          .put("uri", "long.md").put("content_type", "text/markdown").put("content", text.toString()));
      var lifecycle = gateway.gateway().lifecycle();
      dev.quarry.support.Await.until(() -> lifecycle.running() == 1, java.time.Duration.ofSeconds(30),
          "the ingest to register with the drain");
      var stopped = gateway.vertx().close(); // the drain waits for the ingest
      try (Socket silent = connect(gateway)) {
        assertThat(readToClose(silent)).isEmpty();
        assertThat(lifecycle.running()).as("closed by the sweep while the drain still waited, not by the shutdown")
            .isEqualTo(1);
      }
      // The drain then lets the ingest finish or stops it; which is GatewayOpsTest's matter.
      stopped.await();
    }
  }

  @Test
  @DisplayName("a connection the guard closes is gone from the server at once, even with answers queued"
      + " its client never read (pipelined requests, no reading)")
  void closedConnectionsAreGone() throws Exception {
    try (TestGateway gateway = TestGateway.start(c -> c.withHttpIdleSeconds(1))) {
      byte[] pipeline = "GET /console/documents.js HTTP/1.1\r\nHost: localhost\r\n\r\n".repeat(600)
          .getBytes(StandardCharsets.US_ASCII);
      List<Socket> readers = new ArrayList<>();
      try {
        for (int i = 0; i < 3; i++) {
          Socket s = new Socket();
          s.setReceiveBufferSize(4096);
          s.connect(new java.net.InetSocketAddress("localhost", gateway.port()));
          s.getOutputStream().write(pipeline); // about 7 MB of answers; nothing is read
          readers.add(s);
        }
        // The answers back up, the gateway stops reading requests, the connection goes quiet, and the
        // guard closes it: its server side must then leave ESTABLISHED (not wait for a flush forever).
        dev.quarry.support.Await.until(() -> readers.stream().noneMatch(s -> serverSideOpen(gateway, s)),
            java.time.Duration.ofSeconds(30), "the server side of the unread connections to close");
      } finally {
        for (Socket s : readers) {
          s.close();
        }
      }
    }
  }

  /** Whether the gateway's end of the client socket {@code s} is still ESTABLISHED (ss, from iproute2). */
  private static boolean serverSideOpen(TestGateway gateway, Socket s) {
    try {
      Process p = new ProcessBuilder("ss", "-Htn", "state", "established", "( sport = :" + gateway.port()
          + " and dport = :" + s.getLocalPort() + " )").redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      p.waitFor();
      return !out.isBlank();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Test
  @DisplayName("the metrics port is guarded too: a silent connection there is closed once idle")
  void metricsPortIsGuarded() throws Exception {
    try (TestGateway gateway = TestGateway.start(c -> c.withHttpIdleSeconds(1))) {
      try (Socket silent = new Socket("localhost", gateway.metricsPort())) {
        silent.setSoTimeout(15_000);
        long t0 = System.nanoTime();
        assertThat(readToClose(silent)).isEmpty();
        assertThat((System.nanoTime() - t0) / 1e9).as("closed within seconds, not the socket's 15 s timeout")
            .isLessThan(10);
      }
    }
  }

  @Test
  @DisplayName("a request under way is not cut for being quiet: an upload whose body pauses longer than"
      + " the idle limit is answered")
  void quietRequestIsNotCut() throws Exception {
    try (TestGateway gateway = TestGateway.start(c -> c.withHttpIdleSeconds(1))) {
      String body = new JsonObject().put("uri", "slow.md").put("content_type", "text/markdown")
          .put("content", "# Slow\n\nA document sent in two halves.\n").encode();
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      try (Socket s = connect(gateway); Socket silent = connect(gateway)) {
        OutputStream out = s.getOutputStream();
        out.write(("POST /v1/documents HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + gateway.apiKey()
            + "\r\nContent-Type: application/json\r\nContent-Length: " + bytes.length + "\r\nConnection: close\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII));
        out.write(bytes, 0, bytes.length / 2);
        out.flush();
        // The body pauses until the guard has closed a connection opened with it that sent nothing:
        // the idle limit has passed, and a sweep has looked at the paused upload too.
        assertThat(readToClose(silent)).isEmpty();
        out.write(bytes, bytes.length / 2, bytes.length - bytes.length / 2);
        out.flush();
        assertThat(readToClose(s)).startsWith("HTTP/1.1 201");
      }
    }
  }

  @Test
  @DisplayName("at QUARRY_MAX_CONNECTIONS silent connections cannot keep a client out: a new connection"
      + " displaces the oldest quiet one, and is served")
  void silentConnectionsDoNotLockOut() throws Exception {
    try (TestGateway gateway = TestGateway.start(c -> c.withMaxConnections(4))) {
      List<Socket> silent = new ArrayList<>();
      try {
        for (int i = 0; i < 10; i++) {
          silent.add(connect(gateway));
        }
        // Past the cap, each silent connection displaced an older one: the first six are closed.
        for (Socket s : silent.subList(0, 6)) {
          assertThat(readToClose(s)).isEmpty();
        }
        for (int i = 0; i < 3; i++) {
          try (Socket s = connect(gateway)) {
            s.getOutputStream().write("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
                .getBytes(StandardCharsets.US_ASCII));
            assertThat(readToClose(s)).as("a request on a new connection, with the cap held by silent ones")
                .startsWith("HTTP/1.1 200");
          }
        }
      } finally {
        for (Socket s : silent) {
          s.close();
        }
      }
    }
  }
}
