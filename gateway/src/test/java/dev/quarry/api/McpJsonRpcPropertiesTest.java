package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.config.Quota;
import dev.quarry.support.HostPathGrep;
import dev.quarry.support.LogCapture;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
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
 * Malformed JSON-RPC at {@code POST /mcp}, in an open session, over real HTTP: bodies that are not
 * JSON, JSON that is not a message (a scalar, a batch), envelopes that are wrong (the version, the
 * method, the id, a request and a response at once), requests whose params are not an object or
 * not what the method takes (tools/call's name, arguments, _meta; an unknown tool), unknown methods,
 * notifications with bad params, responses nobody asked for, tool arguments of wrong types, and a
 * body over the limit. Each gets its answer, in the response form MCP's transport allows (one JSON
 * object, or an SSE stream), never an empty stream and never a 500:
 * <ul>
 *   <li>not JSON: {@code -32700}, HTTP 400; not a message: {@code -32600}, HTTP 400 (id null, or the
 *       request's own when it had a valid one);
 *   <li>an unknown method: {@code -32601}; params the method cannot take: {@code -32602}; both
 *       answering the request's id;
 *   <li>tool arguments of wrong types: the tool's error ({@code isError: true}), as MCP asks;
 *   <li>a notification the server need not act on: 202; one that is malformed: 400 with
 *       {@code -32602}; a response (Quarry never asks a client anything): 400 with {@code -32600};
 *   <li>no answer holds a host path, and nothing is logged at ERROR.
 * </ul>
 * {@code -Dquarry.fuzz.report=true} tallies instead of failing at once (see {@link MalformedHttpPropertiesTest}).
 */
@Label("Malformed JSON-RPC at /mcp: always the proper JSON-RPC error, never an empty stream")
class McpJsonRpcPropertiesTest {
  private static final boolean REPORT = Boolean.getBoolean("quarry.fuzz.report");
  private static TestGateway gateway;
  private static LogCapture logs;
  private static HostPathGrep hostPaths;
  private static String session;
  private static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
  private static final Map<String, AtomicInteger> outcomes = new ConcurrentHashMap<>();
  private static final List<String> violations = java.util.Collections.synchronizedList(new ArrayList<>());
  private static final AtomicInteger tries = new AtomicInteger();

  @BeforeContainer
  static void start() throws Exception {
    gateway = TestGateway.started(config -> config.withTenancy(
        config.tenancy().withDefault(Quota.REQUESTS_PER_MINUTE, 1_000_000)));
    hostPaths = new HostPathGrep(gateway.dataDir(), gateway.dataDir().resolve("run"));
    HttpResponse<String> opened = post(new JsonObject().put("jsonrpc", "2.0").put("id", 0).put("method", "initialize")
        .put("params", new JsonObject().put("protocolVersion", "2025-06-18").put("capabilities", new JsonObject())
            .put("clientInfo", new JsonObject().put("name", "fuzz").put("version", "1"))).encode(), null);
    assertThat(opened.statusCode()).as(opened.body()).isEqualTo(200);
    session = opened.headers().firstValue("Mcp-Session-Id").orElseThrow();
    HttpResponse<String> initialized = post(new JsonObject().put("jsonrpc", "2.0")
        .put("method", "notifications/initialized").encode(), session);
    assertThat(initialized.statusCode()).isEqualTo(202);
    logs = new LogCapture();
  }

  @AfterContainer
  static void stop() throws Exception {
    if (logs != null) {
      logs.close();
    }
    System.out.println("McpJsonRpcPropertiesTest: " + tries + " messages; outcomes " + new TreeMap<>(outcomes)
        + "; violations " + violations.size());
    violations.stream().limit(40).forEach(v -> System.out.println("  " + v));
    if (gateway != null) {
      gateway.close();
    }
    if (REPORT) {
      assertThat(violations).as("violations (report mode)").isEmpty();
    }
  }

  private static HttpResponse<String> post(String body, String sessionId) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(gateway.url() + "/mcp")).timeout(Duration.ofSeconds(60))
        .header("Authorization", "Bearer " + gateway.apiKey()).header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .POST(HttpRequest.BodyPublishers.ofString(body));
    if (sessionId != null) {
      b.header("Mcp-Session-Id", sessionId);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** What a malformed message must get. */
  enum Expect {
    PARSE_ERROR(-32700), INVALID_REQUEST(-32600), METHOD_NOT_FOUND(-32601), INVALID_PARAMS(-32602),
    TOOL_ERROR(0), ACCEPTED(0), BAD_NOTIFICATION(-32602), TOO_LARGE(-32600);

    final int code;

    Expect(int code) {
      this.code = code;
    }
  }

  /** A message as sent, what it must get, the id it carried when that id was a valid one, and why it is wrong. */
  record Case(String body, Expect expect, Object id, String why) {
    @Override
    public String toString() {
      return why + " " + (body.length() > 200 ? body.substring(0, 200) + "…" : body) + " => " + expect;
    }
  }

  @Property(tries = 300)
  @Label("a malformed message gets its JSON-RPC error (or tool error) in a proper response")
  void malformedMessages(@ForAll("cases") Case c) throws Exception {
    tries.incrementAndGet();
    logs.clear();
    HttpResponse<String> r = post(c.body(), session);
    List<String> wrong = check(c, r);
    List<String> paths = hostPaths.in(r.body());
    if (!paths.isEmpty()) {
      wrong.add("host paths " + paths);
    }
    if (!logs.errorsAndTraces().isEmpty()) {
      wrong.add("logged " + logs.errorsAndTraces());
    }
    outcomes.computeIfAbsent(c.expect() + (wrong.isEmpty() ? " ok" : " WRONG"), k -> new AtomicInteger())
        .incrementAndGet();
    if (!wrong.isEmpty()) {
      String v = c + " -> " + wrong + "; got " + r.statusCode() + " " + r.headers().firstValue("content-type")
          .orElse("") + " " + abbreviate(r.body());
      violations.add(v);
      if (!REPORT) {
        throw new AssertionError(v);
      }
    }
  }

  private static List<String> check(Case c, HttpResponse<String> r) {
    List<String> wrong = new ArrayList<>();
    if (r.statusCode() >= 500) {
      wrong.add("status " + r.statusCode());
    }
    List<JsonObject> messages = messages(r);
    switch (c.expect()) {
      case ACCEPTED -> {
        if (r.statusCode() != 202) {
          wrong.add("not 202");
        }
      }
      case PARSE_ERROR, INVALID_REQUEST, BAD_NOTIFICATION, TOO_LARGE -> {
        int status = c.expect() == Expect.TOO_LARGE ? 413 : 400;
        if (r.statusCode() != status) {
          wrong.add("not " + status);
        }
        JsonObject error = error(messages, c, wrong);
        if (error != null && !Objects.equals(error.getValue("code"), c.expect().code)
            && !(c.expect() == Expect.BAD_NOTIFICATION && Objects.equals(error.getValue("code"), -32600))) {
          wrong.add("code " + error.getValue("code") + ", not " + c.expect().code);
        }
      }
      case METHOD_NOT_FOUND, INVALID_PARAMS -> {
        if (r.statusCode() != 200) {
          wrong.add("not 200");
        }
        JsonObject error = error(messages, c, wrong);
        if (error != null && !Objects.equals(error.getValue("code"), c.expect().code)) {
          wrong.add("code " + error.getValue("code") + ", not " + c.expect().code);
        }
      }
      case TOOL_ERROR -> {
        JsonObject answer = messages.stream().filter(m -> m.containsKey("result") || m.containsKey("error"))
            .findFirst().orElse(null);
        if (answer == null) {
          wrong.add("no answer (an empty stream)");
        } else if (!Objects.equals(answer.getValue("id"), c.id())) {
          wrong.add("answers id " + answer.getValue("id") + ", not " + c.id());
        } else if (answer.getJsonObject("result") == null
            || !Boolean.TRUE.equals(answer.getJsonObject("result").getValue("isError"))) {
          wrong.add("not a tool error");
        }
      }
    }
    return wrong;
  }

  /** The one JSON-RPC error among {@code messages}, checked for its envelope and its id. */
  private static JsonObject error(List<JsonObject> messages, Case c, List<String> wrong) {
    JsonObject answer = messages.stream().filter(m -> m.containsKey("error") || m.containsKey("result"))
        .findFirst().orElse(null);
    if (answer == null) {
      wrong.add("no JSON-RPC error (an empty or non-JSON-RPC answer)");
      return null;
    }
    if (!"2.0".equals(answer.getValue("jsonrpc"))) {
      wrong.add("no jsonrpc 2.0");
    }
    Object id = answer.getValue("id");
    boolean idOk = c.expect() == Expect.METHOD_NOT_FOUND || c.expect() == Expect.INVALID_PARAMS
        ? Objects.equals(id, c.id()) : id == null || Objects.equals(id, c.id());
    if (!idOk || !answer.containsKey("id")) {
      wrong.add("id " + id + " (sent " + c.id() + ")");
    }
    Object error = answer.getValue("error");
    if (!(error instanceof JsonObject e) || !(e.getValue("code") instanceof Integer)
        || !(e.getValue("message") instanceof String)) {
      wrong.add("not a JSON-RPC error object: " + answer.encode());
      return null;
    }
    return e;
  }

  /** The JSON-RPC messages of an answer: its one JSON object, or each {@code data:} of its SSE stream. */
  private static List<JsonObject> messages(HttpResponse<String> r) {
    String type = r.headers().firstValue("content-type").orElse("");
    List<JsonObject> out = new ArrayList<>();
    try {
      if (type.startsWith("application/json")) {
        out.add(new JsonObject(r.body()));
      } else if (type.startsWith("text/event-stream")) {
        for (String line : r.body().split("\n")) {
          if (line.startsWith("data:")) {
            out.add(new JsonObject(line.substring(5).trim()));
          }
        }
      }
    } catch (RuntimeException e) {
      // not JSON: no messages
    }
    return out;
  }

  // --- the generator ---

  @Provide
  Arbitrary<Case> cases() {
    return Arbitraries.oneOf(notJson(), notAMessage(), badEnvelope(), unknownMethod(), badParams(), badToolCall(),
        badToolArguments(), notifications(), responses(), Arbitraries.just(tooLarge()));
  }

  private static JsonObject request(Object id, String method, Object params) {
    JsonObject o = new JsonObject().put("jsonrpc", "2.0").put("id", id).put("method", method);
    return params == NONE ? o : o.put("params", params);
  }

  private static final Object NONE = new Object();

  private static Arbitrary<Object> ids() {
    return Arbitraries.oneOf(Arbitraries.integers().between(1, 1_000_000).map(i -> (Object) i),
        Arbitraries.strings().alpha().numeric().ofMinLength(1).ofMaxLength(20).map(s -> (Object) s));
  }

  /** Values that are not objects, for params and their fields. */
  private static Arbitrary<Object> notObjects() {
    return Arbitraries.of(new JsonArray().add(1), new JsonArray(), "params", "", 0, -1, 3.5, true, false,
        new JsonArray().add(new JsonObject()));
  }

  private static Arbitrary<Case> notJson() {
    Arbitrary<String> fixed = Arbitraries.of("", " ", "{", "[", "{\"jsonrpc\":", "nul", "tru", "{'a': 1}", "\uFEFF{}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}}", "{\"a\":1} {\"b\":2}", "[".repeat(5000),
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",}", "NaN", "{\"a\":\u0001}", "\"unterminated");
    Arbitrary<String> random = Arbitraries.strings().withCharRange(' ', '~').ofMinLength(1).ofMaxLength(40)
        .filter(s -> !parses(s));
    return Arbitraries.oneOf(fixed, random).map(s -> new Case(s, Expect.PARSE_ERROR, null, "not JSON"));
  }

  private static boolean parses(String s) {
    try {
      io.vertx.core.json.Json.decodeValue(s);
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }

  private static Arbitrary<Case> notAMessage() {
    return Arbitraries.of("1", "\"ping\"", "true", "null", "[]", "[1, 2]", "-0.5", "[" + request(1, "ping", NONE).encode()
        + "]", "[" + request(1, "ping", NONE).encode() + ", " + request(2, "ping", NONE).encode() + "]", "{}")
        .map(s -> new Case(s, Expect.INVALID_REQUEST, null, "not a message"));
  }

  private static Arbitrary<Case> badEnvelope() {
    return Combinators.combine(ids(), Arbitraries.integers().between(0, 13)).as((id, v) -> {
      JsonObject m = request(id, "ping", NONE);
      Object validId = id;
      switch (v) {
        case 0 -> m.remove("jsonrpc");
        case 1 -> m.put("jsonrpc", "1.0");
        case 2 -> m.put("jsonrpc", 2.0);
        case 3 -> m.putNull("jsonrpc");
        case 4 -> m.remove("method");
        case 5 -> m.put("method", 5);
        case 6 -> m.putNull("method");
        case 7 -> m.put("method", new JsonObject());
        case 8 -> m.put("method", "");
        case 9 -> {
          m.put("id", new JsonObject().put("a", 1));
          validId = null;
        }
        case 10 -> {
          m.put("id", new JsonArray().add(1));
          validId = null;
        }
        case 11 -> {
          m.put("id", true);
          validId = null;
        }
        case 12 -> {
          m.putNull("id");
          validId = null;
        }
        default -> m.put("result", new JsonObject());
      }
      return new Case(m.encode(), Expect.INVALID_REQUEST, validId, "envelope " + v);
    });
  }

  private static Arbitrary<Case> unknownMethod() {
    Arbitrary<String> names = Arbitraries.oneOf(Arbitraries.of("notifications/initialized", "notifications/cancelled",
        "resources/list", "prompts/get", "sampling/createMessage", "tools/cal", "TOOLS/LIST", "rpc.discover",
        "tools/list/", " ping", "completion/complete"),
        Arbitraries.strings().withCharRange('a', 'z').ofMinLength(1).ofMaxLength(20).map(s -> "x/" + s));
    return Combinators.combine(ids(), names).as((id, name) -> new Case(request(id, name, new JsonObject()).encode(),
        Expect.METHOD_NOT_FOUND, id, "unknown method"));
  }

  private static Arbitrary<Case> badParams() {
    return Combinators.combine(ids(), Arbitraries.of("tools/call", "tools/list", "ping"), notObjects().injectNull(0.2))
        .as((id, method, params) -> new Case(request(id, method, params).encode(), Expect.INVALID_PARAMS, id,
            "params not an object"));
  }

  private static Arbitrary<Case> badToolCall() {
    return Combinators.combine(ids(), Arbitraries.integers().between(0, 7), notObjects()).as((id, v, bad) -> {
      JsonObject params = new JsonObject().put("name", "search").put("arguments", new JsonObject().put("query", "x"));
      switch (v) {
        case 0 -> params.remove("name");
        case 1 -> params.put("name", bad);
        case 2 -> params.putNull("name");
        case 3 -> params.put("name", "no_such_tool");
        case 4 -> params.put("arguments", bad);
        case 5 -> params.put("_meta", bad);
        case 6 -> params.put("_meta", new JsonObject().put("progressToken", new JsonObject()));
        default -> params.put("name", "");
      }
      return new Case(request(id, "tools/call", params).encode(), Expect.INVALID_PARAMS, id, "tools/call " + v);
    });
  }

  private static Arbitrary<Case> badToolArguments() {
    List<Map.Entry<String, JsonObject>> bad = List.of(
        Map.entry("search", new JsonObject().put("query", 5)),
        Map.entry("search", new JsonObject().put("query", "x").put("limit", "ten")),
        Map.entry("search", new JsonObject().put("query", "x").put("limit", 0)),
        Map.entry("search", new JsonObject().put("query", new JsonArray())),
        Map.entry("search", new JsonObject().put("frob", 1)),
        Map.entry("search", new JsonObject()),
        Map.entry("search", new JsonObject().put("query", "x").put("document_ids", "not-a-list")),
        Map.entry("read_document", new JsonObject().put("document_id", 5)),
        Map.entry("read_document", new JsonObject().put("document_id", "../../etc/passwd")),
        Map.entry("read_document", new JsonObject().put("document_id", java.util.UUID.randomUUID().toString())
            .put("part", 7)),
        Map.entry("read_document", new JsonObject().put("document_id", java.util.UUID.randomUUID().toString())
            .put("max_chars", "all")),
        Map.entry("list_documents", new JsonObject().put("limit", "x")),
        Map.entry("list_documents", new JsonObject().put("cursor", 5)),
        Map.entry("run_code", new JsonObject().put("code", 5)),
        Map.entry("run_code", new JsonObject().put("code", new JsonArray().add("print(1)"))),
        Map.entry("run_code", new JsonObject().put("code", "print(1)").put("limits", "fast")));
    return Combinators.combine(ids(), Arbitraries.of(bad)).as((id, e) -> new Case(request(id, "tools/call",
        new JsonObject().put("name", e.getKey()).put("arguments", e.getValue())).encode(), Expect.TOOL_ERROR, id,
        "arguments"));
  }

  private static Arbitrary<Case> notifications() {
    Arbitrary<Case> unknown = Arbitraries.strings().withCharRange('a', 'z').ofMinLength(1).ofMaxLength(12)
        .map(s -> new Case(new JsonObject().put("jsonrpc", "2.0").put("method", "notifications/" + s).encode(),
            Expect.ACCEPTED, null, "an unknown notification"));
    Arbitrary<Case> badParams = notObjects().injectNull(0.2).map(p -> new Case(new JsonObject().put("jsonrpc", "2.0")
        .put("method", "notifications/initialized").put("params", p).encode(), Expect.BAD_NOTIFICATION, null,
        "a notification's params not an object"));
    return Arbitraries.oneOf(unknown, badParams);
  }

  private static Arbitrary<Case> responses() {
    return Combinators.combine(ids(), Arbitraries.integers().between(0, 5)).as((id, v) -> {
      JsonObject m = new JsonObject().put("jsonrpc", "2.0").put("id", id);
      switch (v) {
        case 0 -> m.put("result", new JsonObject()).put("error", new JsonObject().put("code", 1).put("message", "x"));
        case 1 -> m.put("error", "failed");
        case 2 -> m.put("error", new JsonObject().put("code", "x").put("message", "m"));
        case 3 -> m.put("error", new JsonObject().put("code", 1));
        case 4 -> m.put("result", new JsonObject()); // well formed, but Quarry never asks a client anything
        default -> {
          m.remove("id");
          m.put("result", new JsonObject());
        }
      }
      return new Case(m.encode(), Expect.INVALID_REQUEST, v == 5 ? null : id, "response " + v);
    });
  }

  private static Case tooLarge() {
    return new Case(request(1, "tools/call", new JsonObject().put("name", "search").put("arguments",
        new JsonObject().put("query", "q".repeat(1024 * 1024 + 10)))).encode(), Expect.TOO_LARGE, 1, "over the limit");
  }

  private static String abbreviate(String s) {
    return s.length() > 400 ? s.substring(0, 400) + "…" : s;
  }
}
