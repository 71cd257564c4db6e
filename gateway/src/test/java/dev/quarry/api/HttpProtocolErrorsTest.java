package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.support.LogCapture;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Each way a request can break HTTP itself, on both ports, over raw sockets: its status (400, 414,
 * 431, 501, 505), the API's error shape with the error's code, {@code Connection: close} and the
 * connection closed, nothing logged at ERROR or with a stack trace, the refusal counted in
 * {@code quarry_http_protocol_errors_total}, and the port serving the next client.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("Requests that break HTTP get their 4xx (or 501, 505) in the API's shape, on both ports")
class HttpProtocolErrorsTest {
  private TestGateway gateway;
  private LogCapture logs;

  @BeforeAll
  void start() {
    gateway = TestGateway.started(config -> config.withBodyTimeoutMs(3_000));
    logs = new LogCapture();
  }

  @AfterAll
  void stop() throws Exception {
    logs.close();
    gateway.close();
  }

  /**
   * One broken request: what it is, its bytes, what it must get. A broken body ({@code inBody}) is
   * sent to POST /v1/search; on the metrics port, where no such route is, its answer is the 404 given
   * before the body is read, and then the connection closes.
   */
  record Broken(String what, String bytes, int status, String code, boolean inBody) {
    Broken(String what, String bytes, int status, String code) {
      this(what, bytes, status, code, code.equals("malformed_chunked_body") || what.startsWith("trailers"));
    }
  }

  private List<Broken> broken(String key) {
    String auth = "Authorization: Bearer " + key + "\r\n";
    String post = "POST /v1/search HTTP/1.1\r\nHost: localhost\r\n" + auth + "Content-Type: application/json\r\n";
    return List.of(
        new Broken("no Host", "GET /healthz HTTP/1.1\r\n\r\n", 400, "invalid_host"),
        new Broken("an invalid Host", "GET /healthz HTTP/1.1\r\nHost: a b\r\n\r\n", 400, "invalid_host"),
        new Broken("two Hosts", "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "invalid_host"),
        new Broken("an empty Host", "GET /healthz HTTP/1.1\r\nHost:\r\n\r\n", 400, "invalid_host"),
        new Broken("HTTP/0.9", "GET /healthz\r\n\r\n", 400, "malformed_request"),
        new Broken("HTTP/1.2", "GET /healthz HTTP/1.2\r\nHost: x\r\n\r\n", 505, "http_version_not_supported"),
        new Broken("HTTP/2.0 over HTTP/1", "GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n", 505, "http_version_not_supported"),
        new Broken("a version that is no version", "GET /healthz HTTP/1.1x\r\nHost: x\r\n\r\n", 400, "malformed_request"),
        new Broken("a bad method token", "G@T /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 400, "malformed_request"),
        new Broken("a request line over the limit", "GET /" + "a".repeat(5000) + " HTTP/1.1\r\nHost: x\r\n\r\n", 414,
            "uri_too_long"),
        new Broken("headers over the limit", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + "h".repeat(20_000)
            + "\r\n\r\n", 431, "headers_too_large"),
        new Broken("a header name with a space", "GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n", 400,
            "malformed_request"),
        new Broken("a space before the colon", "GET /healthz HTTP/1.1\r\nHost : x\r\n\r\n", 400, "malformed_request"),
        new Broken("a folded Transfer-Encoding (obs-fold)", post + "Transfer-Encoding: gzip\r\n chunked\r\n\r\n"
            + "2\r\n{}\r\n0\r\n\r\n", 501, "transfer_coding_not_implemented"),
        new Broken("a folded Content-Length (obs-fold)", post + "Content-Length: 2\r\n 3\r\n\r\n{}", 400,
            "malformed_request"),
        new Broken("a NUL in a header value", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\n\r\n", 400,
            "malformed_request"),
        new Broken("an invalid Content-Length", post + "Content-Length: -1\r\n\r\n", 400, "malformed_request"),
        new Broken("two different Content-Lengths", post + "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}", 400,
            "malformed_request"),
        new Broken("an unknown transfer coding", post + "Transfer-Encoding: gzip\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 501,
            "transfer_coding_not_implemented"),
        new Broken("chunked not last", post + "Transfer-Encoding: chunked, gzip\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 501,
            "transfer_coding_not_implemented"),
        new Broken("chunked twice", post + "Transfer-Encoding: chunked, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 400,
            "malformed_request"),
        new Broken("Transfer-Encoding in HTTP/1.0", post.replace("HTTP/1.1", "HTTP/1.0")
            + "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 400, "malformed_request"),
        new Broken("a chunk size that is not hex", post + "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", 400,
            "malformed_chunked_body"),
        new Broken("a chunk-size line over the limit", post + "Transfer-Encoding: chunked\r\n\r\n" + "1".repeat(20_000)
            + "\r\n", 400, "malformed_chunked_body"),
        new Broken("a chunk-size line over the limit after a good chunk", post + "Transfer-Encoding: chunked\r\n\r\n"
            + "2\r\n{}\r\n" + "1".repeat(20_000) + "\r\n", 400, "malformed_chunked_body"),
        new Broken("trailers over the limit", post + "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\nX-T: "
            + "t".repeat(20_000) + "\r\n\r\n", 431, "headers_too_large"));
  }

  @Test
  @DisplayName("each broken request, on the API's port and the metrics port")
  void eachOnBothPorts() {
    List<String> wrong = new ArrayList<>();
    for (int port : new int[] {gateway.port(), gateway.metricsPort()}) {
      for (Broken b : broken(gateway.apiKey())) {
        logs.clear();
        double before = counted(b.code());
        RawExchange.Result r = RawExchange.exchange(port, b.bytes().getBytes(StandardCharsets.ISO_8859_1), false,
            List.of("GET"), Duration.ofSeconds(10), Duration.ofSeconds(20));
        String where = (port == gateway.port() ? "api" : "metrics") + " port, " + b.what() + ": " + r;
        RawExchange.Response first = r.first();
        if (first == null) {
          wrong.add(where + ": no answer");
          continue;
        }
        if (b.inBody() && port == gateway.metricsPort()) {
          if (first.status() != 404 || !r.closed() || !logs.errorsAndTraces().isEmpty()) {
            wrong.add(where + ": not the route's 404, then closed, nothing logged");
          }
          continue;
        }
        if (first.status() != b.status()) {
          wrong.add(where + ": status " + first.status() + ", not " + b.status());
        }
        JsonObject error = json(first).getJsonObject("error", new JsonObject());
        if (!b.code().equals(error.getString("code")) || error.getString("message", "").isBlank()) {
          wrong.add(where + ": not the error " + b.code());
        }
        if (!first.closes() || !r.closed()) {
          wrong.add(where + ": the connection is not closed (Connection: " + first.header("connection") + ")");
        }
        if (first.header("x-request-id") == null) {
          wrong.add(where + ": no X-Request-Id");
        }
        if (!logs.errorsAndTraces().isEmpty()) {
          wrong.add(where + ": logged " + logs.errorsAndTraces());
        }
        if (counted(b.code()) < before + 1) {
          wrong.add(where + ": not counted in quarry_http_protocol_errors_total{code=\"" + b.code() + "\"}");
        }
        RawHttp.Answer next = RawHttp.send(port, "GET", "/healthz", null, null);
        if (next.status() != 200) {
          wrong.add(where + ": the next request got " + next);
        }
      }
    }
    assertThat(wrong).isEmpty();
  }

  @Test
  @DisplayName("a request pipelined behind a broken one is not served: the connection closes after the refusal")
  void nothingAfterARefusal() {
    String smuggled = "POST /v1/search HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + gateway.apiKey()
        + "\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip\r\n\r\n"
        + "GET /v1/documents HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + gateway.apiKey() + "\r\n\r\n";
    RawExchange.Result r = RawExchange.exchange(gateway.port(), smuggled.getBytes(StandardCharsets.ISO_8859_1), false,
        List.of("POST", "GET"), Duration.ofSeconds(5), Duration.ofSeconds(20));
    assertThat(r.responses()).as(r.toString()).hasSize(1);
    assertThat(r.first().status()).isEqualTo(501);
    assertThat(r.closed()).isTrue();
  }

  @Test
  @DisplayName("an unknown path or method on the metrics port answers in the API's shape")
  void metricsPortShape() {
    RawHttp.Answer nope = RawHttp.send(gateway.metricsPort(), "GET", "/nope", null, null);
    assertThat(nope.status()).isEqualTo(404);
    assertThat(new JsonObject(nope.body()).getJsonObject("error").getString("code")).isEqualTo("not_found");
    RawHttp.Answer post = RawHttp.send(gateway.metricsPort(), "POST", "/metrics", null, "{}");
    assertThat(post.status()).isEqualTo(405);
    assertThat(new JsonObject(post.body()).getJsonObject("error").getString("code")).isEqualTo("method_not_allowed");
  }

  private static JsonObject json(RawExchange.Response r) {
    try {
      return new JsonObject(r.text());
    } catch (RuntimeException e) {
      return new JsonObject();
    }
  }

  /** The counter's value for {@code code} in a scrape of /metrics; 0 before its first count. */
  private double counted(String code) {
    String scrape = gateway.metricsClient().get("/metrics").send().await().bodyAsString();
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^quarry_http_protocol_errors_total\\{[^}]*code=\""
        + code + "\"[^}]*}\\s+(\\S+)").matcher(scrape);
    return m.find() ? Double.parseDouble(m.group(1)) : 0;
  }
}
