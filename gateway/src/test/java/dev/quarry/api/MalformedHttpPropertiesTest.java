package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.config.Quota;
import dev.quarry.support.HostPathGrep;
import dev.quarry.support.LogCapture;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Route;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Malformed HTTP, over raw sockets, on every route of the API's router and of the metrics port:
 * a well-formed request for the route, with up to three random mutations of its head (request
 * line, method, version, target, Host, header names, values and folding, line endings), its
 * framing (Content-Length and Transfer-Encoding, invalid, conflicting or doubled; chunk sizes,
 * chunk-size lines, trailers, the last chunk) or its connection (pipelined behind or before a good
 * request, cut short, garbage before it, a byte changed). Whatever is sent:
 * <ul>
 *   <li>no response is a 500, and a 5xx is only 501, 503 or 505;
 *   <li>every error has the API's JSON error shape ({@code {"error": {"message", …}}});
 *   <li>nothing received holds a host path;
 *   <li>the gateway still answers a well-formed request on that port;
 *   <li>nothing is logged at ERROR, nor with a stack trace.
 * </ul>
 * With {@code -Dquarry.fuzz.report=true} a try's violations are tallied instead of failing it at
 * once, and the tally (how many 500s among how many responses) is printed at the end, which then
 * fails if there were any: the way the figures before and after a fix are counted.
 */
@Label("Malformed HTTP on every route of both ports: never a 500, always the error shape, no host path, no ERROR")
class MalformedHttpPropertiesTest {
  private static final boolean REPORT = Boolean.getBoolean("quarry.fuzz.report");
  private static final Duration QUIET = Duration.ofMillis(1500);
  private static final Duration OVERALL = Duration.ofSeconds(20);
  private static TestGateway gateway;
  private static LogCapture logs;
  private static HostPathGrep hostPaths;
  private static final List<Target> targets = new ArrayList<>();
  private static final Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
  private static final List<String> violations = java.util.Collections.synchronizedList(new ArrayList<>());
  private static final AtomicInteger tries = new AtomicInteger();

  /** A route to send to: on which port, with which method, at which path, with which credential. */
  record Target(boolean metricsPort, String method, String path, String bearer) {
    @Override
    public String toString() {
      return (metricsPort ? "metrics " : "") + method + " " + path;
    }
  }

  @BeforeContainer
  static void start() {
    gateway = TestGateway.started(config -> config.withBodyTimeoutMs(2_000).withHttpIdleSeconds(2)
        .withTenancy(config.tenancy().withDefault(Quota.REQUESTS_PER_MINUTE, 1_000_000)));
    hostPaths = new HostPathGrep(gateway.dataDir(), gateway.dataDir().resolve("run"));
    for (Route route : gateway.gateway().routes()) {
      if (route.getPath() == null || route.methods() == null || route.methods().isEmpty()) {
        continue; // the handlers every request passes (request id, canonical path, failures)
      }
      // A random id: a target nobody holds, so that no mutation that still reads well deletes anything.
      String path = route.getPath().replaceAll(":[a-z_]+", UUID.randomUUID().toString());
      String bearer = path.startsWith("/v1/admin") ? TestGateway.ADMIN_TOKEN : gateway.apiKey();
      for (HttpMethod method : route.methods()) {
        targets.add(new Target(false, method.name(), path, bearer));
      }
    }
    for (String path : List.of("/metrics", "/healthz", "/readyz")) {
      targets.add(new Target(true, "GET", path, null));
    }
    logs = new LogCapture();
  }

  @AfterContainer
  static void stop() throws Exception {
    if (logs != null) {
      logs.close();
    }
    System.out.println("MalformedHttpPropertiesTest: " + tries + " tries; statuses " + new TreeMap<>(statuses)
        + "; 500s " + statuses.getOrDefault(500, new AtomicInteger()) + "; violations " + violations.size());
    violations.stream().limit(40).forEach(v -> System.out.println("  " + v));
    if (gateway != null) {
      gateway.close();
    }
    if (REPORT) {
      assertThat(violations).as("violations (report mode)").isEmpty();
    }
  }

  @Provide
  Arbitrary<Target> targets() {
    return Arbitraries.of(targets);
  }

  /** One mutation: its kind, a variant of it and where (a fraction of the length it applies to). */
  record Mutation(Kind kind, int variant, double at) {
    @Override
    public String toString() {
      return kind + "/" + variant + "@" + String.format("%.2f", at);
    }
  }

  @Provide
  Arbitrary<List<Mutation>> mutations() {
    return Combinators.combine(Arbitraries.of(Kind.class), Arbitraries.integers().between(0, 15),
        Arbitraries.doubles().between(0, 1)).as(Mutation::new).list().ofMinSize(1).ofMaxSize(3);
  }

  @Property(tries = 400)
  @Label("a mutated request: no 500, the error shape, no host path, still serving, no ERROR logged")
  void malformedRequests(@ForAll("targets") Target target, @ForAll("mutations") List<Mutation> mutations) {
    tries.incrementAndGet();
    logs.clear();
    Sent sent = render(target, mutations);
    int port = target.metricsPort() ? gateway.metricsPort() : gateway.port();
    RawExchange.Result result = RawExchange.exchange(port, sent.bytes(), sent.closeOutput(), sent.methods(), QUIET,
        OVERALL);
    List<String> wrong = new ArrayList<>();
    for (RawExchange.Response r : result.responses()) {
      statuses.computeIfAbsent(r.status(), s -> new AtomicInteger()).incrementAndGet();
      if (r.status() == 500 || (r.status() >= 500 && r.status() != 501 && r.status() != 503 && r.status() != 505)) {
        wrong.add("status " + r.status());
      }
      if (r.status() >= 400 && !isHead(r, sent) && !errorShaped(r)) {
        wrong.add("not the error shape");
      }
    }
    List<String> paths = hostPaths.in(result.raw());
    if (!paths.isEmpty()) {
      wrong.add("host paths " + paths);
    }
    RawHttp.Answer after = RawHttp.send(port, "GET", "/healthz", null, null);
    if (after.status() != 200) {
      wrong.add("a well-formed request afterwards got " + after);
    }
    List<String> logged = logs.errorsAndTraces();
    if (!logged.isEmpty()) {
      wrong.add("logged " + logged);
    }
    if (!wrong.isEmpty()) {
      String v = target + " " + mutations + " -> " + wrong + "; received " + result;
      violations.add(v);
      if (!REPORT) {
        throw new AssertionError(v + "\nsent: " + abbreviate(new String(sent.bytes(), StandardCharsets.ISO_8859_1)));
      }
    }
  }

  private static boolean isHead(RawExchange.Response r, Sent sent) {
    return sent.methods().contains("HEAD");
  }

  /** {@code {"error": {"message": "...", …}}}, as JSON: the API's shape, OpenAI's and JSON-RPC's share it. */
  private static boolean errorShaped(RawExchange.Response r) {
    String type = String.valueOf(r.header("content-type"));
    if (!type.startsWith("application/json")) {
      return false;
    }
    try {
      JsonObject error = new JsonObject(r.text()).getJsonObject("error");
      return error != null && error.getValue("message") instanceof String;
    } catch (RuntimeException e) {
      return false;
    }
  }

  // --- the requests and their mutations ---

  /** A request as it goes out: its bytes, whether the client then closes its side, its methods in order. */
  record Sent(byte[] bytes, boolean closeOutput, List<String> methods) {}

  /** A request under construction: the parts mutations change before it is written out. */
  private static final class Req {
    String method;
    String target;
    String version = "HTTP/1.1";
    final List<String[]> headers = new ArrayList<>();
    byte[] body;
    /** The body as framed on the wire (chunk-encoded when chunked). */
    byte[] wire;

    void header(String name, String value) {
      headers.add(new String[] {name, value});
    }

    void remove(String name) {
      headers.removeIf(h -> h[0].equalsIgnoreCase(name));
    }

    void set(String name, String value) {
      remove(name);
      header(name, value);
    }

    void chunked(String... chunkLines) {
      remove("Content-Length");
      set("Transfer-Encoding", "chunked");
      wire = String.join("", chunkLines).getBytes(StandardCharsets.ISO_8859_1);
    }

    String head() {
      StringBuilder sb = new StringBuilder().append(method).append(' ').append(target);
      if (!version.isEmpty()) {
        sb.append(' ').append(version);
      }
      sb.append("\r\n");
      for (String[] h : headers) {
        sb.append(h[0]).append(h[1] == null ? "" : ": " + h[1]).append("\r\n");
      }
      return sb.append("\r\n").toString();
    }

    byte[] bytes() {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      out.writeBytes(head().getBytes(StandardCharsets.ISO_8859_1));
      out.writeBytes(wire);
      return out.toByteArray();
    }
  }

  private static Req base(Target t, boolean close) {
    Req r = new Req();
    r.method = t.method();
    r.target = t.path();
    r.header("Host", "localhost");
    if (t.bearer() != null) {
      r.header("Authorization", "Bearer " + t.bearer());
    }
    if (t.path().equals("/mcp")) {
      r.header("Accept", "application/json, text/event-stream");
    }
    boolean hasBody = !t.method().equals("GET") && !t.method().equals("DELETE") && !t.method().equals("HEAD");
    r.body = hasBody ? (t.path().equals("/v1/search") ? "{\"query\": \"fuzz\"}" : "{}").getBytes(StandardCharsets.UTF_8)
        : new byte[0];
    if (hasBody) {
      r.header("Content-Type", "application/json");
    }
    r.header("Content-Length", Integer.toString(r.body.length));
    r.wire = r.body;
    if (close) {
      r.header("Connection", "close");
    }
    return r;
  }

  enum Kind {
    DROP_HOST, DUPLICATE_HOST, BAD_HOST, METHOD, VERSION, TARGET, LONG_HEADER, MANY_HEADERS, BAD_HEADER_NAME,
    NO_COLON, OBS_FOLD, SPACE_BEFORE_COLON, CONTROL_IN_VALUE, BARE_LF, BARE_CR, CONTENT_LENGTH_INVALID,
    CONTENT_LENGTH_CONFLICT, CONTENT_LENGTH_SHORT, CONTENT_LENGTH_LONG, TRANSFER_ENCODING, TE_AND_CL,
    CHUNK_SIZE, CHUNK_SIZE_LINE_LONG, CHUNK_FRAMING, CHUNK_TRAILER, CHUNK_UNFINISHED, PIPELINE_BEHIND,
    PIPELINE_BEFORE, TRUNCATE, GARBAGE_FIRST, CHANGE_BYTE
  }

  private static final String[] HOSTS = {"", "a b", "x:y:z", "[::1", "ex@mple", "h\u00ffst", "x:99999", "a/b", "%41",
      "localhost, other", "\t", "x:", ":80", "[zz]", "host:-1", "..."};
  private static final String[] METHODS = {"G@T", "GE T", "", "get", "BREW", "M".repeat(9000), "PRI", "CONNECT",
      "TRACE", "HEAD", "OPTIONS", "G\u0000T", "GET\t", "\u00c9T", "PATCH", "PUT"};
  private static final String[] VERSIONS = {"HTTP/1.0", "HTTP/1.2", "HTTP/2.0", "", "HTTP/1.1x", "http/1.1", "HTTP/11",
      "HTTP/1.1 extra", "HTTP/9.9", "ICY", "HTTP/1", "HTTP/1.1\u0000", "HTTP/0.9", "HTTP/3.0", "HTTP/1.10", "HTTP/ 1.1"};
  private static final String[] HEADER_NAMES = {"Bad Header", "X\u0000Y", "\u00dcn\u00ef", "", "X(Y)", "Host ", "X\tY",
      "X@Y", "X\"Y", "X/Y", "X\u007fY", "[X]", "X,Y", "X;Y", "X=Y", "X{Y}"};
  private static final String[] CONTENT_LENGTHS = {"-1", "abc", "1e3", "+5", "99999999999999999999", "", " 5 ", "0x10",
      "5, 6", "5,5", "1 2", "\u00b9", "-0", "007", "2147483648", "9223372036854775808"};
  private static final String[] TRANSFER_ENCODINGS = {"gzip", "identity", "chunked, gzip", "gzip, chunked", "x",
      "chunked, chunked", "CHUNKED", " chunked ", "chunked;q=1", "", "compress", "deflate", "chunked,", ",chunked",
      "chunkedx", "\u00ffchunked"};
  private static final String[] CHUNK_SIZES = {"zz", "-1", "ffffffffffffffffffff", "", " 5", "5 ; ext", "0x5", "+5",
      "5;" + "e".repeat(100), "7fffffff", "80000000", "g", "5\u0000", "5 5", "0;", "1_0"};

  private static Sent render(Target t, List<Mutation> mutations) {
    Req r = base(t, true);
    List<String> methods = new ArrayList<>(List.of(t.method()));
    boolean closeOutput = false;
    String payload = new String(r.body, StandardCharsets.ISO_8859_1);
    String chunk = Integer.toHexString(r.body.length) + "\r\n" + payload + "\r\n";
    List<Mutation> onBytes = new ArrayList<>();
    for (Mutation m : mutations) {
      int v = m.variant();
      switch (m.kind()) {
        case DROP_HOST -> r.remove("Host");
        case DUPLICATE_HOST -> r.header("Host", v % 2 == 0 ? "other.example" : "localhost");
        case BAD_HOST -> r.set("Host", HOSTS[v]);
        case METHOD -> {
          r.method = METHODS[v];
          methods.set(0, r.method);
        }
        case VERSION -> r.version = VERSIONS[v];
        case TARGET -> r.target = List.of("/x".repeat(3000), "*", "", "http://other/v1/documents", r.target + "?q="
            + "q".repeat(8000), "/\u0000", "/%", "//", "/v1/" + "\u00e9".repeat(10), "?", "http://", r.target + "#f",
            "/" + "a".repeat(70_000), "x", "/v1/documents?" + "a=1&".repeat(3000), "\t/").get(v);
        case LONG_HEADER -> r.header("X-Long", "v".repeat(List.of(9_000, 20_000, 70_000, 8_100).get(v % 4)));
        case MANY_HEADERS -> {
          for (int i = 0; i < 100 + v * 40; i++) {
            r.header("X-Many-" + i, "value");
          }
        }
        case BAD_HEADER_NAME -> r.header(HEADER_NAMES[v], "x");
        case NO_COLON -> r.header(List.of("NoColonHere", "  ", "X-Y ", "Host").get(v % 4), null);
        case OBS_FOLD -> r.headers.add(Math.min(r.headers.size(), (int) (m.at() * r.headers.size()) + 1),
            new String[] {(v % 2 == 0 ? " " : "\t") + "folded", null});
        case SPACE_BEFORE_COLON -> r.header(List.of("Content-Type ", "Host ", "X-A ", "Authorization\t").get(v % 4),
            "x");
        case CONTROL_IN_VALUE -> r.header("X-Ctl", "a" + List.of("\u0000", "\u0001", "\u007f", "\r", "\u000b", "\u00ff",
            "\u0080", "\u001b").get(v % 8) + "b");
        case CONTENT_LENGTH_INVALID -> r.set("Content-Length", CONTENT_LENGTHS[v]);
        case CONTENT_LENGTH_CONFLICT -> r.header("Content-Length", Integer.toString(r.body.length + 1 + v));
        case CONTENT_LENGTH_SHORT -> r.set("Content-Length", Integer.toString(Math.max(0, r.body.length - 1 - v)));
        case CONTENT_LENGTH_LONG -> {
          r.set("Content-Length", Integer.toString(r.body.length + 1 + v * 100));
          closeOutput = v % 2 == 0;
        }
        case TRANSFER_ENCODING -> {
          r.remove("Content-Length");
          r.header("Transfer-Encoding", TRANSFER_ENCODINGS[v]);
          r.wire = (chunk + "0\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1);
        }
        case TE_AND_CL -> {
          r.chunked(chunk, "0\r\n\r\n");
          r.header("Content-Length", Integer.toString(v % 2 == 0 ? r.wire.length : r.body.length));
        }
        case CHUNK_SIZE -> r.chunked(CHUNK_SIZES[v] + "\r\n", payload, "\r\n0\r\n\r\n");
        case CHUNK_SIZE_LINE_LONG -> r.chunked(v % 2 == 0 ? "1".repeat(20_000) + "\r\n"
            : Integer.toHexString(r.body.length) + ";" + "e".repeat(20_000) + "\r\n", payload, "\r\n0\r\n\r\n");
        case CHUNK_FRAMING -> r.chunked(List.of(
            Integer.toHexString(r.body.length) + "\r\n" + payload + "0\r\n\r\n", // no CRLF after the data
            Integer.toHexString(r.body.length + 5) + "\r\n" + payload + "\r\n0\r\n\r\n", // size over the data
            "1\r\n" + payload + "\r\n0\r\n\r\n", // size under the data
            Integer.toHexString(r.body.length) + "\n" + payload + "\n0\n\n", // bare LFs
            chunk + "0\r\n", // no end of trailers
            chunk + "0\r\n\r\n" + "garbage") // bytes after the last chunk
            .get(v % 6));
        case CHUNK_TRAILER -> r.chunked(chunk, "0\r\n", List.of("Bad Header: x\r\n", "X-T: " + "t".repeat(20_000)
            + "\r\n", "NoColon\r\n", " folded\r\n", "Content-Length: 5\r\n", "X\u0000: y\r\n").get(v % 6), "\r\n");
        case CHUNK_UNFINISHED -> {
          r.chunked(chunk.substring(0, Math.max(1, (int) (m.at() * chunk.length()))));
          closeOutput = v % 2 == 0;
        }
        default -> onBytes.add(m);
      }
    }
    byte[] bytes = r.bytes();
    for (Mutation m : onBytes) {
      int v = m.variant();
      switch (m.kind()) {
        case BARE_LF -> bytes = replaceInHead(bytes, "\r\n", "\n");
        case BARE_CR -> bytes = replaceInHead(bytes, "\r\n", "\r");
        case PIPELINE_BEHIND -> {
          Req good = base(t, false);
          bytes = concat(good.bytes(), bytes);
          methods.add(0, t.method());
        }
        case PIPELINE_BEFORE -> {
          Req good = base(t, true);
          bytes = concat(replaceInHead(bytes, "Connection: close\r\n", ""), good.bytes());
          methods.add(t.method());
        }
        case TRUNCATE -> {
          bytes = java.util.Arrays.copyOf(bytes, Math.max(1, (int) (m.at() * bytes.length)));
          closeOutput = v % 2 == 0;
        }
        case GARBAGE_FIRST -> bytes = concat(List.of("\r\n", "\r\n\r\n", "\u0000\u0001\u0002", "GARBAGE\r\n",
            "\u0016\u0003\u0001\u0000\u00a5", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", " ", "\u00ff\u00fe")
            .get(v % 8).getBytes(StandardCharsets.ISO_8859_1), bytes);
        case CHANGE_BYTE -> {
          int at = Math.min(bytes.length - 1, (int) (m.at() * bytes.length));
          bytes = bytes.clone();
          bytes[at] = (byte) new int[] {0, ' ', ':', '\r', '\n', 0xff, 0x7f, '"', 'A', '\t', '%', '/', 0x80, ',', ';',
              '?'}[v];
        }
        default -> throw new IllegalStateException("not a byte mutation: " + m);
      }
    }
    return new Sent(bytes, closeOutput, methods);
  }

  /** {@code bytes} with {@code from} replaced by {@code to} in the first request's head only. */
  private static byte[] replaceInHead(byte[] bytes, String from, String to) {
    String all = new String(bytes, StandardCharsets.ISO_8859_1);
    int end = all.indexOf("\r\n\r\n");
    end = end < 0 ? all.length() : end + 4;
    return (all.substring(0, end).replace(from, to) + all.substring(end)).getBytes(StandardCharsets.ISO_8859_1);
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  private static String abbreviate(String s) {
    return s.length() > 600 ? s.substring(0, 600) + "…" : s;
  }
}
