package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.support.Await;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Red team round 8: one tenant's held upload bodies filled most of the data volume. With 1 MiB of
 * room (4 bodies of the test gateway's largest upload, 256 KiB), a tenant holds at most two.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("Uploads under way share the gateway's room on its data volume between tenants")
class UploadSpaceApiTest {
  private final TestGateway gateway = TestGateway.started(config -> config.withUploadSpaceMb(1));
  private final List<Socket> held = new ArrayList<>();

  @AfterAll
  void stop() throws IOException {
    held.forEach(s -> {
      try {
        s.close();
      } catch (IOException e) {
        // closing
      }
    });
    gateway.close();
  }

  /** An upload declaring the largest body, its head and a few bytes sent, then held open. */
  private Socket hold(String key) throws IOException {
    Socket s = new Socket("localhost", gateway.port());
    String head = "POST /v1/documents HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + key
        + "\r\nContent-Type: application/json\r\nContent-Length: " + TestGateway.UPLOAD_LIMIT + "\r\n\r\n{\"content\": \"";
    s.getOutputStream().write(head.getBytes(StandardCharsets.ISO_8859_1));
    s.getOutputStream().flush();
    held.add(s);
    return s;
  }

  private RawHttp.Answer small(String key, String text) {
    return RawHttp.send(gateway.port(), "POST", "/v1/documents", key,
        new JsonObject().put("content", text).put("content_type", "text/plain").encode());
  }

  @Test
  @DisplayName("a tenant holding half gets 429 naming the room; another tenant still uploads; the room taken is 503;"
      + " a closed connection gives its room back")
  void shares() throws IOException {
    TestGateway.NewTenant noisy = gateway.createTenant("noisy-uploads");
    TestGateway.NewTenant quiet = gateway.createTenant("quiet-uploads");
    TestGateway.NewTenant third = gateway.createTenant("third-uploads");
    Socket first = hold(noisy.apiKey());
    hold(noisy.apiKey());
    // A minute: each try is a whole small upload, which a loaded machine may take seconds to ingest.
    Await.until(() -> small(noisy.apiKey(), "one more").status() == 429, Duration.ofSeconds(60),
        "the noisy tenant's third upload refused");
    RawHttp.Answer over = small(noisy.apiKey(), "one more");
    assertThat(over.status()).isEqualTo(429);
    assertThat(over.body()).contains("too_many_uploads").contains("QUARRY_UPLOAD_SPACE_MB");

    RawHttp.Answer ok = small(quiet.apiKey(), "the quiet tenant's note");
    assertThat(ok.status()).as(ok.toString()).isBetween(200, 201);

    hold(quiet.apiKey());
    hold(quiet.apiKey());
    Await.until(() -> small(third.apiKey(), "a third tenant").status() == 503, Duration.ofSeconds(60),
        "the room taken: a third tenant's upload waits");
    RawHttp.Answer busy = small(third.apiKey(), "a third tenant");
    assertThat(busy.body()).contains("uploads_busy");
    assertThat(busy.head()).containsIgnoringCase("Retry-After: 5");

    first.close();
    Await.until(() -> small(third.apiKey(), "a third tenant").status() < 300, Duration.ofSeconds(30),
        "the room of a closed upload given back");
  }
}
