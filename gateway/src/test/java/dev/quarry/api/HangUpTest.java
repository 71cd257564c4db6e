package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.quarry.support.Await;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** Clients that hang up in the middle of their request's body (red team R6-7). */
@DisplayName("A client hanging up mid-body is not an error of the gateway's")
class HangUpTest {
  @Test
  @DisplayName("uploads cut short are noted at debug level, never logged as unexpected errors, and the gateway serves on")
  void hangUpsAreNotErrors() throws Exception {
    Logger logger = (Logger) LoggerFactory.getLogger(ErrorMapping.class);
    ListAppender<ILoggingEvent> seen = new ListAppender<>();
    seen.start();
    Level before = logger.getLevel();
    logger.setLevel(Level.DEBUG);
    logger.addAppender(seen);
    try (TestGateway gateway = TestGateway.start()) {
      byte[] head = ("POST /v1/search HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + gateway.apiKey()
          + "\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"query\": ")
          .getBytes(StandardCharsets.US_ASCII);
      for (int i = 0; i < 20; i++) {
        try (Socket s = new Socket("localhost", gateway.port())) {
          OutputStream out = s.getOutputStream();
          out.write(head);
          out.flush();
          // The client is done sending, its body 990 bytes short, and waits for what the gateway says.
          s.shutdownOutput();
          s.setSoTimeout(15_000);
          while (s.getInputStream().read() >= 0) {
            // whatever comes, until the gateway closes its side
          }
        }
      }
      Await.until(() -> seen.list.stream().anyMatch(e -> e.getFormattedMessage().contains("closed the connection")),
          Duration.ofSeconds(20), "the gateway to notice a client that hung up mid-body");
      assertThat(seen.list).noneMatch(e -> e.getLevel().isGreaterOrEqual(Level.WARN));
      assertThat(gateway.client().get("/healthz").send().await().statusCode()).isEqualTo(200);
          } finally {
      logger.detachAppender(seen);
      logger.setLevel(before);
    }
  }
}
