package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.support.Await;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The JSON form of POST /v1/documents, as large as the upload limit allows: past 64 KiB it goes to a
 * file under the uploads directory as it arrives (issue 33: 32 bodies of 49 MiB held open took 2 GB of
 * heap), and that file is gone on every path.
 */
@DisplayName("A large JSON body is spooled to disk as it arrives, and its file deleted on every path")
class SpooledBodyTest {
  private static final long BODY_TIMEOUT_MS = 3000;

  @AutoClose
  private final TestGateway gateway = TestGateway.started(config -> config.withBodyTimeoutMs(BODY_TIMEOUT_MS));

  /**
   * A JSON ingest of about {@code size} bytes: a short Markdown document (its embedding is what an
   * ingest spends its time on) and a field the ingest does not read, which makes up the size.
   */
  private static byte[] body(String uri, int size) {
    StringBuilder text = new StringBuilder("# Spooled\\n\\n");
    for (int i = 0; i < 40; i++) {
      text.append("Line ").append(i).append(" of a document sent as JSON, é and \\\"quoted\\\".\\n\\n");
    }
    String head = "{\"uri\": \"" + uri + "\", \"content_type\": \"text/markdown\", \"content\": \"" + text
        + "\", \"padding\": \"";
    return (head + "p".repeat(Math.max(0, size - head.length() - 2)) + "\"}").getBytes(StandardCharsets.UTF_8);
  }

  /** Opens a POST of {@code declared} bytes and sends the first {@code sent} of {@code body}. */
  private Socket open(byte[] body, int sent, long declared) throws IOException {
    Socket socket = new Socket("localhost", gateway.port());
    OutputStream out = socket.getOutputStream();
    out.write(("POST /v1/documents HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nAuthorization: Bearer "
        + gateway.apiKey() + "\r\nContent-Type: application/json\r\nContent-Length: " + declared + "\r\n\r\n")
        .getBytes(StandardCharsets.US_ASCII));
    out.write(body, 0, sent);
    out.flush();
    return socket;
  }

  /** The size of the one file in the uploads directory, or -1 when there is none. */
  private long spooled() {
    try (Stream<Path> files = Files.list(ApiRoutes.uploadsDir(gateway.config()))) {
      var all = files.toList();
      return all.size() == 1 ? Files.size(all.get(0)) : all.isEmpty() ? -1 : -all.size();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String answer(Socket socket) throws IOException {
    socket.setSoTimeout(60_000);
    return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
  }

  /** The answer's head and its body (by its Content-Length), without waiting for the connection's end. */
  private static String head(Socket socket) throws IOException {
    socket.setSoTimeout(60_000);
    var in = socket.getInputStream();
    StringBuilder seen = new StringBuilder();
    while (seen.indexOf("\r\n\r\n") < 0) {
      int b = in.read();
      if (b < 0) {
        break;
      }
      seen.append((char) b);
    }
    var m = java.util.regex.Pattern.compile("(?im)^content-length:\\s*(\\d+)").matcher(seen);
    if (m.find()) {
      seen.append(new String(in.readNBytes(Integer.parseInt(m.group(1))), StandardCharsets.UTF_8));
    }
    return seen.toString();
  }

  @Test
  @DisplayName("a body past 64 KiB is in a file, growing as it arrives, while the client sends it; once it has all"
      + " arrived the document is ingested (201) and the file is gone")
  void spooledThenIngested() throws Exception {
    byte[] body = body("spooled.md", 200_000);
    int half = body.length / 2;
    try (Socket socket = open(body, half, body.length)) {
      Await.until(() -> spooled() == half, Duration.ofSeconds(10), "the first half of the body in its file");
      socket.getOutputStream().write(body, half, body.length - half);
      String answer = answer(socket);
      assertThat(answer).startsWith("HTTP/1.1 201").contains("\"status\":\"created\"");
    }
    assertThat(gateway.leftoverUploads()).isZero();
    assertThat(gateway.count("documents")).isEqualTo(1);
    // The document is what the same body sent whole always made of it.
    String text = gateway.client().get("/v1/documents/" + new JsonObject(gateway.client().get("/v1/documents").send()
        .await().bodyAsString()).getJsonArray("documents").getJsonObject(0).getString("id") + "/content").send().await()
        .bodyAsString();
    assertThat(text).startsWith("Spooled").contains("Line 0 of a document sent as JSON, é and \"quoted\".");
  }

  @Test
  @DisplayName("a spooled body that is not valid JSON gets 400 malformed_json, as a small one does, and leaves no file")
  void malformedSpooled() throws Exception {
    byte[] body = body("broken.md", 150_000);
    body[body.length - 1] = ',';
    try (Socket socket = open(body, body.length, body.length)) {
      String answer = answer(socket);
      assertThat(answer).startsWith("HTTP/1.1 400").contains("malformed_json")
          .contains("the request body is not valid JSON: Failed to decode:Unexpected end-of-input");
    }
    assertThat(gateway.leftoverUploads()).isZero();
    assertThat(gateway.count("documents")).isZero();
  }

  @Test
  @DisplayName("a client that goes away mid-body leaves no file behind")
  void clientGone() throws Exception {
    byte[] body = body("gone.md", 200_000);
    try (Socket socket = open(body, 150_000, body.length)) {
      Await.until(() -> spooled() == 150_000, Duration.ofSeconds(10), "the body so far in its file");
    }
    Await.until(() -> spooled() == -1, Duration.ofSeconds(10), "the file deleted after the client left");
  }

  @Test
  @DisplayName("a spooled body that stalls gets 408 at the body timeout, the connection closes, the file goes")
  void stalled() throws Exception {
    byte[] body = body("stalled.md", 200_000);
    try (Socket socket = open(body, 100_000, body.length)) {
      Await.until(() -> spooled() == 100_000, Duration.ofSeconds(10), "the body so far in its file");
      String answer = answer(socket);
      assertThat(answer).startsWith("HTTP/1.1 408").contains("request_timeout").contains("QUARRY_BODY_TIMEOUT_MS");
    }
    assertThat(gateway.leftoverUploads()).isZero();
  }

  @Test
  @DisplayName("a body over the upload limit gets 413 whether its Content-Length says so or it just goes on, and"
      + " leaves no file")
  void overTheLimit() throws Exception {
    long limit = TestGateway.UPLOAD_LIMIT;
    try (Socket socket = open(new byte[0], 0, limit + 1)) {
      // Answered at once, before any of the body; the connection stays for the client to close, as an
      // upload's does, so that a client still sending is not reset before it reads the answer.
      assertThat(head(socket)).startsWith("HTTP/1.1 413").contains("too_large").contains("256 KiB");
    }
    // Chunked: no length to refuse up front; refused once past the limit, the file deleted.
    try (Socket socket = new Socket("localhost", gateway.port())) {
      OutputStream out = socket.getOutputStream();
      out.write(("POST /v1/documents HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + gateway.apiKey()
          + "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      byte[] chunk = "x".repeat(32 * 1024).getBytes(StandardCharsets.US_ASCII);
      try {
        for (long sent = 0; sent <= limit; sent += chunk.length) {
          out.write((Integer.toHexString(chunk.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
          out.write(chunk);
          out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
        }
        out.flush();
      } catch (IOException closed) {
        // the gateway may close while the rest is still being sent
      }
      assertThat(answer(socket)).startsWith("HTTP/1.1 413").contains("too_large");
    }
    Await.until(() -> gateway.leftoverUploads() == 0, Duration.ofSeconds(10), "no file left");
  }

  @Test
  @DisplayName("a small body stays in memory and is ingested as before")
  void smallBody() {
    var r = gateway.client().post("/v1/documents").sendJsonObject(new JsonObject().put("uri", "small.md")
        .put("content", "# Small\n\nIn memory.")).await();
    assertThat(r.statusCode()).isEqualTo(201);
    assertThat(gateway.leftoverUploads()).isZero();
  }
}
