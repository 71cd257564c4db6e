package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.support.Await;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Request bodies a tenant trickles in, each holding a connection until the body timeout (red team R6-1). */
@DisplayName("A tenant sends at most 32 request bodies at once")
class BodyPlacesTest {
  private static final String BODY = "{\"query\": \"tides\", \"limit\": 3}";

  private static Socket startSearch(TestGateway gateway, String firstBytes) throws IOException {
    Socket s = new Socket("localhost", gateway.port());
    s.getOutputStream().write(("POST /v1/search HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer "
        + gateway.apiKey() + "\r\nContent-Type: application/json\r\nContent-Length: " + BODY.length()
        + "\r\nConnection: close\r\n\r\n" + firstBytes).getBytes(StandardCharsets.US_ASCII));
    s.getOutputStream().flush();
    return s;
  }

  /** What a socket has been answered so far, without waiting. */
  private static String answered(Socket s, Map<Socket, StringBuilder> seen) {
    StringBuilder out = seen.computeIfAbsent(s, k -> new StringBuilder());
    try {
      InputStream in = s.getInputStream();
      for (int n = in.available(); n > 0; n = in.available()) {
        byte[] buf = in.readNBytes(n);
        out.append(new String(buf, StandardCharsets.ISO_8859_1));
      }
    } catch (IOException e) {
      // closed: what came before stands
    }
    return out.toString();
  }

  @Test
  @DisplayName("40 bodies trickled at once: 32 are waited for, 8 get 429 too_many_uploads; once one has"
      + " arrived, another may start")
  void boundedPerTenant() throws Exception {
    try (TestGateway gateway = TestGateway.start()) {
      List<Socket> sockets = new ArrayList<>();
      Map<Socket, StringBuilder> seen = new HashMap<>();
      try {
        for (int i = 0; i < 40; i++) {
          sockets.add(startSearch(gateway, BODY.substring(0, 5)));
        }
        Await.until(() -> sockets.stream().filter(s -> answered(s, seen).startsWith("HTTP/1.1 429")).count() == 8,
            Duration.ofSeconds(30), "8 of the 40 to be refused");
        List<Socket> waiting = sockets.stream().filter(s -> answered(s, seen).isEmpty()).toList();
        assertThat(waiting).hasSize(32);
        assertThat(sockets.stream().map(s -> answered(s, seen)).filter(a -> a.startsWith("HTTP/1.1 429")))
            .allMatch(a -> a.contains("too_many_uploads"));
        // One body arrives: its search is answered, and its place goes to a new request.
        Socket first = waiting.get(0);
        first.getOutputStream().write(BODY.substring(5).getBytes(StandardCharsets.US_ASCII));
        first.setSoTimeout(30_000);
        assertThat(new String(first.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1))
            .startsWith("HTTP/1.1 200");
        Socket next = startSearch(gateway, BODY);
        sockets.add(next);
        next.setSoTimeout(30_000);
        assertThat(new String(next.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1))
            .startsWith("HTTP/1.1 200");
      } finally {
        for (Socket s : sockets) {
          s.close();
        }
      }
    }
  }
}
