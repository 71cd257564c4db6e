package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.multipart.MultipartForm;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Random hostile requests against every endpoint, from a seeded generator (set
 * {@code -Dquarry.fuzz.seed=N} to replay a run; the seed is printed). Bounded in count and in time.
 * Every answer must be a 1xx-4xx (never a 5xx) without a stack trace; afterwards the gateway still
 * serves and no document is half written.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("Hostile input: random, malformed and oversized requests on every endpoint")
class HostileInputFuzzTest {
  private static final int REQUESTS = 400;
  private static final String PUNCTUATION = "\"\\/'<>{}[]%&?#";
  /** Every request gets an answer well within this; one that does not fails the test. */
  private static final long AWAIT_SECONDS = 30;
  private static final long TIME_BUDGET_MS = TimeUnit.SECONDS.toMillis(120);
  private static final String[] CONTENT_TYPES = {"application/json", "text/plain", "multipart/form-data",
      "multipart/form-data; boundary=x", "application/json; charset=utf-16", "", "application/x-www-form-urlencoded",
      "text/markdown", "application/octet-stream", "application/json;;; charset=\"x"};

  private TestGateway gateway;
  private TestGateway.NewTenant tenant;
  private UUID knownDoc;

  @BeforeAll
  void start() throws Exception {
    gateway = TestGateway.start();
    tenant = gateway.createTenant("fuzz");
    HttpResponse<Buffer> r = gateway.clientFor(tenant.apiKey()).post("/v1/documents").sendJsonObject(new JsonObject()
        .put("uri", "known.md").put("content_type", "text/markdown")
        .put("content", "# Known\n\nA document the fuzzer may read, search and delete.\n")).await();
    assertThat(r.statusCode()).isEqualTo(201);
    knownDoc = UUID.fromString(r.bodyAsJsonObject().getString("id"));
  }

  @AfterAll
  void stop() throws Exception {
    gateway.close();
  }

  @Test
  @DisplayName("no 5xx, no stack trace, no partial write, and the gateway serves afterwards")
  void hammer() throws Exception {
    long seed = Long.getLong("quarry.fuzz.seed", 0x5EEDL);
    System.out.println("HostileInputFuzzTest seed " + seed);
    Random random = new Random(seed);
    long deadline = System.currentTimeMillis() + TIME_BUDGET_MS;
    List<String> failures = new ArrayList<>();
    int sent = 0;
    for (int i = 0; i < REQUESTS && System.currentTimeMillis() < deadline; i++) {
      Attempt attempt;
      HttpResponse<Buffer> response;
      try {
        attempt = attempt(random);
      } catch (RuntimeException clientSide) {
        continue; // the client refused to build it (an illegal header): nothing reached the gateway
      }
      try {
        response = attempt.send();
      } catch (RuntimeException noAnswer) {
        failures.add(attempt + " -> no answer: " + noAnswer);
        continue;
      }
      sent++;
      String body = response.bodyAsString() == null ? "" : response.bodyAsString();
      if (response.statusCode() >= 500) {
        failures.add(attempt + " -> " + response.statusCode() + " " + abbreviate(body));
      }
      if (body.contains("\tat ") || body.contains("Exception") || body.contains("dev.quarry.")) {
        failures.add(attempt + " -> stack trace or exception in the body: " + abbreviate(body));
      }
      if (response.statusCode() >= 400 && !body.startsWith("{\"error\":{\"code\":")) {
        failures.add(attempt + " -> error without the JSON error shape: " + abbreviate(body));
      }
    }
    sent += pathSpellings(random, failures);
    for (String raw : rawRequests()) {
      int status = sendRaw(raw);
      if (status >= 500) {
        failures.add("raw " + abbreviate(raw) + " -> " + status);
      }
      sent++;
    }
    assertThat(failures).as("seed " + seed).isEmpty();
    assertThat(sent).as("requests that reached the gateway").isGreaterThan(REQUESTS * 9 / 10);

    // Still serving, for everybody. (The fuzz tenant itself may be gone: an admin request may have
    // deleted it, as the admin API allows; the default tenant is never a target.)
    assertThat(gateway.bareClient().get("/healthz").send().await().statusCode()).isEqualTo(200);
    HttpResponse<Buffer> search = gateway.client().post("/v1/search")
        .sendJsonObject(new JsonObject().put("query", "known document")).await();
    assertThat(search.statusCode()).isEqualTo(200);
    assertThat(gateway.client().get("/v1/documents").send().await().statusCode()).isEqualTo(200);
    // No partial write: every document has exactly the items and chunks it says it has.
    try (Connection c = gateway.database().jdbc(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT d.id, d.item_count, d.chunk_count,"
            + " (SELECT count(*) FROM items i WHERE i.document_id = d.id),"
            + " (SELECT count(*) FROM chunks k WHERE k.document_id = d.id) FROM documents d")) {
      while (rs.next()) {
        assertThat(rs.getLong(4)).as("items of " + rs.getString(1)).isEqualTo(rs.getLong(2));
        assertThat(rs.getLong(5)).as("chunks of " + rs.getString(1)).isEqualTo(rs.getLong(3));
      }
    }
    assertThat(gateway.leftoverUploads()).isZero();
  }

  /** One generated request, printable for the failure report. */
  private record Attempt(String method, String path, String auth, String contentType, String bodyKind,
      java.util.function.Supplier<HttpResponse<Buffer>> sender) {
    HttpResponse<Buffer> send() {
      return sender.get();
    }

    @Override
    public String toString() {
      return method + " " + abbreviate(path) + " [auth " + auth + ", " + contentType + ", " + bodyKind + "]";
    }
  }

  private Attempt attempt(Random r) {
    HttpMethod method = pick(r, HttpMethod.GET, HttpMethod.POST, HttpMethod.PUT, HttpMethod.DELETE,
        HttpMethod.PATCH, HttpMethod.POST, HttpMethod.POST);
    String id = id(r);
    String path = pick(r, "/v1/documents", "/v1/documents/" + id, "/v1/documents/" + id + "/items",
        "/v1/documents/" + id + "/toc", "/v1/documents/" + id + "/content", "/v1/search", "/v1/search",
        "/v1/admin/tenants", "/v1/admin/tenants/" + id, "/v1/admin/tenants/" + id + "/keys",
        "/v1/admin/tenants/" + id + "/quotas", "/v1/admin/tenants/" + id + "/keys/" + id(r),
        "/healthz", "/readyz", "/v1/" + id, "/" + pathText(r), "/v1/documents/" + pathText(r),
        "/v1/documents?limit=" + pathText(r) + "&cursor=" + pathText(r),
        "/v1/documents?limit=" + r.nextInt() + "&cursor=" + java.util.Base64.getUrlEncoder().encodeToString(
            ("d1:" + r.nextLong() + ":" + r.nextInt() + ":" + id).getBytes(StandardCharsets.UTF_8)),
        "/v1/documents?stream=" + pathText(r));
    String authKind = pick(r, "tenant", "tenant", "tenant", "admin", "none", "garbage", "long");
    String auth = switch (authKind) {
      case "tenant" -> "Bearer " + tenant.apiKey();
      case "admin" -> "Bearer " + TestGateway.ADMIN_TOKEN;
      case "none" -> null;
      case "garbage" -> pick(r, "Bearer ", "Basic ", "bearer ", "") + printable(r, 60);
      default -> "Bearer qk_" + "a".repeat(12) + "_" + "Z".repeat(r.nextInt(3000));
    };
    String contentType = pick(r, CONTENT_TYPES);
    String bodyKind = pick(r, "none", "json", "json", "json-fields", "json-fields", "bytes", "deep", "huge", "multipart");
    HttpRequest<Buffer> request = gateway.bareClient().request(method, path).timeout(AWAIT_SECONDS * 1000);
    if (auth != null) {
      request.putHeader("Authorization", auth);
    }
    String accept = pick(r, "", "", "text/event-stream", "application/json, text/event-stream", printable(r, 40),
        "text/event-stream;q=0", "text/event-stream;q=" + printable(r, 5));
    if (!accept.isEmpty()) {
      request.putHeader("Accept", accept);
    }
    if (r.nextInt(4) == 0) {
      request.putHeader("X-Request-Id", printable(r, 200));
    }
    if (!contentType.isEmpty() && !bodyKind.equals("multipart")) {
      request.putHeader("Content-Type", contentType);
    }
    java.util.function.Supplier<HttpResponse<Buffer>> sender = switch (bodyKind) {
      case "none" -> () -> answer(request.send());
      case "json" -> {
        Buffer b = Buffer.buffer(randomJson(r, 0).toString());
        yield () -> answer(request.sendBuffer(b));
      }
      case "json-fields" -> {
        Buffer b = Buffer.buffer(fieldJson(r).encode());
        yield () -> answer(request.sendBuffer(b));
      }
      case "bytes" -> {
        byte[] bytes = new byte[r.nextInt(4096)];
        r.nextBytes(bytes);
        yield () -> answer(request.sendBuffer(Buffer.buffer(bytes)));
      }
      case "deep" -> {
        int depth = 500 + r.nextInt(5000);
        Buffer b = Buffer.buffer("[".repeat(depth) + "]".repeat(r.nextBoolean() ? depth : depth / 2));
        yield () -> answer(request.sendBuffer(b));
      }
      case "huge" -> {
        // Over every body limit: the search/admin JSON limit and the test's upload limit.
        Buffer b = Buffer.buffer(new JsonObject().put("query", "x".repeat((int) TestGateway.UPLOAD_LIMIT + 1024 * 1024 + 10))
            .put("content", "y").encode());
        yield () -> answer(request.sendBuffer(b));
      }
      default -> {
        byte[] bytes = new byte[r.nextInt(2048)];
        r.nextBytes(bytes);
        if (r.nextBoolean()) {
          byte[] head = pick(r, "%PDF-1.7\n", "PK\u0003\u0004", "# Title\n\n", "{\"schema_name\":\"DoclingDocument\"", "<html><body>")
              .getBytes(StandardCharsets.ISO_8859_1);
          System.arraycopy(head, 0, bytes, 0, Math.min(head.length, bytes.length));
        }
        MultipartForm form = MultipartForm.create()
            .attribute("uri", randomText(r, 30))
            .binaryFileUpload(pick(r, "file", "other"), randomText(r, 12) + pick(r, ".pdf", ".docx", ".md", ".txt", ".json", ""),
                Buffer.buffer(bytes), "application/octet-stream");
        yield () -> answer(request.sendMultipartForm(form));
      }
    };
    return new Attempt(method.name(), path, authKind, contentType, bodyKind, sender);
  }

  private String id(Random r) {
    return switch (r.nextInt(8)) {
      case 0 -> knownDoc.toString();
      case 1 -> tenant.id().toString();
      case 2 -> "not-a-uuid";
      case 3 -> UUID.randomUUID().toString().toUpperCase();
      case 4 -> "%2e%2e%2f%2e%2e%2fetc%2fpasswd";
      case 5 -> "1-2-3-4-5";
      case 6 -> "x".repeat(r.nextInt(2000));
      default -> UUID.randomUUID().toString();
    };
  }

  /** A JSON object with the API's field names and values of every wrong (and some right) type. */
  private static JsonObject fieldJson(Random r) {
    JsonObject o = new JsonObject();
    for (String field : new String[] {"query", "limit", "document_ids", "content", "title", "uri", "content_type",
        "name", "requests_per_minute", "stored_bytes", "document_bytes", "concurrent_analyses", "model_tokens_per_day"}) {
      if (r.nextInt(3) > 0) {
        o.put(field, value(r));
      }
    }
    return o;
  }

  private static Object value(Random r) {
    return switch (r.nextInt(12)) {
      case 0 -> null;
      case 1 -> r.nextInt();
      case 2 -> r.nextLong();
      case 3 -> r.nextDouble() * 1e12;
      case 4 -> r.nextBoolean();
      case 5 -> randomText(r, 50);
      case 6 -> "";
      case 7 -> new JsonArray().add(UUID.randomUUID().toString()).add(randomText(r, 5)).add(3);
      case 8 -> new JsonObject().put("a", randomText(r, 5));
      case 9 -> -1;
      case 10 -> "# Heading\n\n" + randomText(r, 200);
      default -> "\u0000\uD800" + randomText(r, 10);
    };
  }

  private static Object randomJson(Random r, int depth) {
    if (depth > 4) {
      return value(r);
    }
    return switch (r.nextInt(4)) {
      case 0 -> {
        JsonObject o = new JsonObject();
        for (int i = r.nextInt(5); i > 0; i--) {
          o.put(randomText(r, 8), randomJson(r, depth + 1));
        }
        yield o;
      }
      case 1 -> {
        JsonArray a = new JsonArray();
        for (int i = r.nextInt(5); i > 0; i--) {
          a.add(randomJson(r, depth + 1));
        }
        yield a;
      }
      default -> value(r);
    };
  }

  private static HttpResponse<Buffer> answer(io.vertx.core.Future<HttpResponse<Buffer>> pending) {
    try {
      return pending.await(AWAIT_SECONDS, TimeUnit.SECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      throw new IllegalStateException("no answer within " + AWAIT_SECONDS + " s", e);
    }
  }

  /** Printable ASCII, as a header value may hold. */
  private static String printable(Random r, int maxLength) {
    StringBuilder sb = new StringBuilder();
    for (int i = r.nextInt(maxLength + 1); i > 0; i--) {
      sb.append((char) (0x21 + r.nextInt(0x5e)));
    }
    return sb.toString();
  }

  /** Random text as a client may legally put in a path: escaped, plus some stray '%' signs. */
  private static String pathText(Random r) {
    String encoded = java.net.URLEncoder.encode(randomText(r, 30), StandardCharsets.UTF_8);
    return r.nextBoolean() ? encoded : encoded + "%" + pick(r, "", "z", "zz", "e2", "C0%AF", "00");
  }

  private static String randomText(Random r, int maxLength) {
    int n = r.nextInt(maxLength + 1);
    StringBuilder sb = new StringBuilder(n);
    for (int i = 0; i < n; i++) {
      sb.append(switch (r.nextInt(6)) {
        case 0 -> (char) (r.nextInt(0x20));
        case 1 -> (char) (0x80 + r.nextInt(0x2000));
        case 2 -> PUNCTUATION.charAt(r.nextInt(PUNCTUATION.length()));
        default -> (char) ('a' + r.nextInt(26));
      });
    }
    return sb.toString();
  }

  @SafeVarargs
  private static <T> T pick(Random r, T... choices) {
    return choices[r.nextInt(choices.length)];
  }

  private static String abbreviate(String s) {
    return s.length() > 200 ? s.substring(0, 200) + "…" : s;
  }

  /**
   * Other spellings of the admin and tenant paths (escapes, dot segments, slashes, case), sent raw
   * with each kind of credential: a non-canonical one is 400 for everybody, and no spelling gives a
   * tenant key or no key anything of the admin API.
   */
  private int pathSpellings(Random r, List<String> failures) {
    String[][] routes = {{"GET", "/v1/admin/tenants"}, {"POST", "/v1/admin/tenants/" + tenant.id() + "/keys"},
        {"PUT", "/v1/admin/tenants/" + tenant.id() + "/quotas"}, {"GET", "/v1/documents/" + knownDoc},
        {"GET", "/v1/documents"}, {"DELETE", "/v1/admin/tenants/" + tenant.id()}};
    int sent = 0;
    for (String[] route : routes) {
      List<PathSpellings.Spelling> spellings = new ArrayList<>(PathSpellings.of(route[1], r, 10));
      java.util.Collections.shuffle(spellings, r);
      for (PathSpellings.Spelling s : spellings.subList(0, Math.min(25, spellings.size()))) {
        String who = pick(r, "tenant", "none", "admin");
        String bearer = switch (who) {
          case "tenant" -> tenant.apiKey();
          case "admin" -> TestGateway.ADMIN_TOKEN;
          default -> null;
        };
        String body = route[0].equals("GET") || route[0].equals("DELETE") ? null
            : new JsonObject().put("name", "fuzz").put("requests_per_minute", 100000).encode();
        RawHttp.Answer a = RawHttp.send(gateway.port(), route[0], s.path(), bearer, body);
        sent++;
        String where = who + " " + route[0] + " " + abbreviate(s.path()) + " (" + s.how() + ") -> " + a;
        if (s.kind() == PathSpellings.Kind.NON_CANONICAL && a.status() != 400) {
          failures.add(where + " (a non-canonical path must be 400)");
        }
        if (!who.equals("admin") && route[1].startsWith("/v1/admin") && a.status() >= 200 && a.status() < 300) {
          failures.add(where + " (admin API reached without the admin token)");
        }
        if (a.status() >= 500) {
          failures.add(where);
        }
      }
    }
    return sent;
  }

  /** Requests no well-behaved client would send, written straight to the socket. */
  private List<String> rawRequests() {
    String auth = "Authorization: Bearer " + tenant.apiKey() + "\r\n";
    return List.of(
        "GARBAGE\r\n\r\n",
        "GET /v1/documents HTTP/1.1\r\nHost: x\r\n" + auth + "X-Big: " + "h".repeat(20_000) + "\r\n\r\n",
        "POST /v1/search HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Type: application/json\r\nContent-Length: 99999999\r\n\r\n{\"query\":",
        "POST /v1/search HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "GET /v1/documents/" + "%".repeat(3) + " HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n",
        "GET /" + "a".repeat(10_000) + " HTTP/1.1\r\nHost: x\r\n\r\n",
        // Multipart without a part name, and without its closing boundary (once a 500, and no answer).
        multipart(auth, "--zz\r\nContent-Disposition: form-data; filename=\"a.md\"\r\n\r\n# A\r\n--zz--\r\n"),
        multipart(auth, "--zz\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.md\"\r\n\r\n# A\r\n"),
        multipart(auth, "--zz\r\n\u0000\u00ff\r\n\r\n--zz--\r\n"),
        "GET /v1/documents/../admin/tenants HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n",
        "GET /v1/%61dmin/tenants HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n",
        "GET //v1/admin/tenants HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n",
        "GET http://x/v1/./admin/tenants HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n");
  }

  private static String multipart(String auth, String body) {
    return "POST /v1/documents HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Type: multipart/form-data; boundary=zz\r\n"
        + "Content-Length: " + body.getBytes(StandardCharsets.ISO_8859_1).length + "\r\n\r\n" + body;
  }

  /** The status of the first response line, or 0 when the gateway closed the connection without one. */
  private int sendRaw(String raw) {
    try (Socket socket = new Socket("localhost", gateway.port())) {
      socket.setSoTimeout(10_000);
      OutputStream out = socket.getOutputStream();
      out.write(raw.getBytes(StandardCharsets.ISO_8859_1));
      out.flush();
      socket.shutdownOutput();
      InputStream in = socket.getInputStream();
      byte[] head = in.readNBytes(12);
      String line = new String(head, StandardCharsets.ISO_8859_1);
      return line.startsWith("HTTP/1.") && line.length() >= 12 ? Integer.parseInt(line.substring(9, 12)) : 0;
    } catch (java.io.IOException e) {
      return 0;
    }
  }
}
