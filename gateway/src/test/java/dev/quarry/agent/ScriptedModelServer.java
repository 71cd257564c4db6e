package dev.quarry.agent;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * The only stand-in in the tests: an OpenAI-compatible chat completions endpoint on a real local
 * port that replays scripted assistant turns (tool calls, final messages, HTTP errors) in order and
 * records every request it gets. Requests without tools are the sandbox's {@code llm()} calls and
 * are answered by {@link #llmReplies}, so they never consume the script.
 */
public final class ScriptedModelServer implements AutoCloseable {
  /** One scripted response. */
  public sealed interface Reply permits ToolCalls, Message, Status, Dynamic, Held {}

  public record ToolCalls(List<String> codes) implements Reply {}

  public record Message(String content) implements Reply {}

  public record Status(int status, String retryAfter, JsonObject body) implements Reply {}

  /** A reply computed from the request, e.g. an answer that quotes the last tool result. */
  public record Dynamic(Function<JsonObject, Reply> reply) implements Reply {}

  /**
   * A reply the test gives later: {@code asked} completes with the request when the model is
   * asked (the analysis is running then), the answer goes out when {@code reply} completes.
   */
  public record Held(java.util.concurrent.CompletableFuture<JsonObject> asked,
      java.util.concurrent.CompletableFuture<Reply> reply) implements Reply {
    public Held() {
      this(new java.util.concurrent.CompletableFuture<>(), new java.util.concurrent.CompletableFuture<>());
    }
  }

  public static Reply execute(String... codes) {
    return new ToolCalls(List.of(codes));
  }

  public static Reply message(String content) {
    return new Message(content);
  }

  public static Reply answer(String answer, String program) {
    return new Message(new JsonObject().put("answer", answer).put("program", program).encode());
  }

  public static Reply status(int status) {
    return new Status(status, null, error("server_error", "scripted failure " + status));
  }

  public static Reply rateLimited(String retryAfterSeconds) {
    return new Status(429, retryAfterSeconds, error("rate_limit_exceeded", "Rate limit reached"));
  }

  public static Reply quotaExceeded() {
    return new Status(429, null, error("insufficient_quota", "You exceeded your current quota"));
  }

  private static JsonObject error(String code, String message) {
    return new JsonObject().put("error",
        new JsonObject().put("message", message).put("type", code).put("param", null).put("code", code));
  }

  private final ConcurrentLinkedDeque<Reply> script = new ConcurrentLinkedDeque<>();
  private final List<JsonObject> requests = new CopyOnWriteArrayList<>();
  private final List<JsonObject> llmRequests = new CopyOnWriteArrayList<>();
  private final List<String> authorizations = new CopyOnWriteArrayList<>();
  private final AtomicInteger ids = new AtomicInteger();
  private volatile Function<String, String> llmReplies = prompt -> "LLM says: " + prompt.length() + " chars";
  /** Whether llm() replies report the tokens a greedy model would: 4 characters a prompt token, the whole bound. */
  private volatile boolean llmToTheBound;
  /** While set, llm() replies wait for it to complete; see {@link #holdLlm}. */
  private volatile java.util.concurrent.CompletableFuture<Void> llmGate;
  private final AtomicInteger llmHangUps = new AtomicInteger();
  private final HttpServer server;

  private ScriptedModelServer(HttpServer server) {
    this.server = server;
  }

  public static ScriptedModelServer start(Vertx vertx) {
    ScriptedModelServer[] holder = new ScriptedModelServer[1];
    HttpServer server = vertx.createHttpServer().requestHandler(req -> holder[0].handle(req));
    holder[0] = new ScriptedModelServer(server);
    server.listen(0, "127.0.0.1").await();
    return holder[0];
  }

  public String baseUrl() {
    return "http://127.0.0.1:" + server.actualPort() + "/v1";
  }

  public ScriptedModelServer then(Reply... replies) {
    script.addAll(List.of(replies));
    return this;
  }

  public ScriptedModelServer llm(Function<String, String> replies) {
    this.llmReplies = replies;
    return this;
  }

  /**
   * From now on an llm() reply reports as prompt tokens its prompt's characters / 4 (rounded up) and
   * as completion tokens its request's whole {@code max_completion_tokens}: a model that always
   * writes as much as it may. Forgotten by {@link #reset}.
   */
  public ScriptedModelServer llmToTheBound() {
    this.llmToTheBound = true;
    return this;
  }

  /**
   * From now on llm() replies go out only when {@code gate} completes (a model still writing); a
   * caller that hangs up before is counted in {@link #llmHangUps}. Forgotten by {@link #reset}.
   */
  public ScriptedModelServer holdLlm(java.util.concurrent.CompletableFuture<Void> gate) {
    this.llmGate = gate;
    return this;
  }

  /** llm() requests whose caller closed the connection before the reply went out. */
  public int llmHangUps() {
    return llmHangUps.get();
  }

  /** The agent's chat requests (those with tools), in arrival order. */
  public List<JsonObject> requests() {
    return List.copyOf(requests);
  }

  /** The Authorization header of each agent chat request, in arrival order. */
  public List<String> authorizations() {
    return List.copyOf(authorizations);
  }

  public List<JsonObject> llmRequests() {
    return List.copyOf(llmRequests);
  }

  private volatile Function<JsonObject, Reply> otherwise;

  /**
   * How to answer once the script is spent (instead of a 500): a reply computed from each request,
   * e.g. from the question and the tool results so far, for analyses running at once.
   */
  public ScriptedModelServer otherwise(Function<JsonObject, Reply> replies) {
    this.otherwise = replies;
    return this;
  }

  public int remaining() {
    return script.size();
  }

  /** Forgets the script and the recorded requests (between tests sharing one server). */
  public void reset() {
    script.clear();
    requests.clear();
    llmRequests.clear();
    authorizations.clear();
    llmToTheBound = false;
    llmGate = null;
    llmHangUps.set(0);
    otherwise = null;
  }

  private void handle(HttpServerRequest req) {
    req.body().onSuccess(body -> {
      if (!req.path().endsWith("/chat/completions")) {
        req.response().setStatusCode(404).end(error("not_found", "no route " + req.path()).encode());
        return;
      }
      JsonObject request = body.toJsonObject();
      if (!request.containsKey("tools")) {
        llmRequests.add(request);
        String prompt = request.getJsonArray("messages").getJsonObject(0).getString("content");
        JsonObject reply = completion(new JsonObject().put("role", "assistant").put("content", llmReplies.apply(prompt)),
            "stop");
        if (llmToTheBound && request.containsKey("max_completion_tokens")) {
          long in = (prompt.length() + 3) / 4;
          long out = request.getLong("max_completion_tokens");
          reply.put("usage", new JsonObject().put("prompt_tokens", in).put("completion_tokens", out)
              .put("total_tokens", in + out));
        }
        java.util.concurrent.CompletableFuture<Void> gate = llmGate;
        if (gate != null) {
          req.response().closeHandler(v -> {
            if (!req.response().ended()) {
              llmHangUps.incrementAndGet();
            }
          });
          gate.thenRun(() -> {
            if (!req.response().closed()) {
              respond(req, reply);
            }
          });
          return;
        }
        respond(req, reply);
        return;
      }
      authorizations.add(String.valueOf(req.getHeader("Authorization")));
      requests.add(request);
      Reply next = script.poll();
      Function<JsonObject, Reply> fallback = otherwise;
      reply(req, request, next == null && fallback != null ? new Dynamic(fallback) : next);
    });
  }

  private void reply(HttpServerRequest req, JsonObject request, Reply next) {
    Reply reply = next;
    while (reply instanceof Dynamic d) {
      reply = d.reply().apply(request);
    }
    if (reply instanceof Held held) {
      // A response may be written from any thread: Vert.x hands the write to its event loop.
      held.reply().thenAccept(later -> reply(req, request, later));
      held.asked().complete(request);
      return;
    }
    switch (reply) {
      case null -> req.response().setStatusCode(500)
          .end(error("script_exhausted", "the test's script has no more turns").encode());
      case Status s -> {
        if (s.retryAfter() != null) {
          req.response().putHeader("retry-after", s.retryAfter());
        }
        req.response().setStatusCode(s.status()).putHeader("content-type", "application/json").end(s.body().encode());
      }
      case Message m -> respond(req, completion(new JsonObject().put("role", "assistant").put("content", m.content()),
          "stop"));
      case ToolCalls t -> {
        JsonArray calls = new JsonArray();
        for (String code : t.codes()) {
          calls.add(new JsonObject().put("id", "call_" + ids.incrementAndGet()).put("type", "function")
              .put("function", new JsonObject().put("name", "execute_code")
                  .put("arguments", new JsonObject().put("code", code).encode())));
        }
        respond(req, completion(new JsonObject().put("role", "assistant").put("content", (String) null)
            .put("tool_calls", calls), "tool_calls"));
      }
      case Dynamic d -> throw new AssertionError("unreachable");
      case Held h -> throw new AssertionError("unreachable");
    }
  }

  private JsonObject completion(JsonObject message, String finishReason) {
    return new JsonObject()
        .put("id", "chatcmpl-" + ids.incrementAndGet())
        .put("object", "chat.completion")
        .put("created", System.currentTimeMillis() / 1000)
        .put("model", "scripted")
        .put("choices", new JsonArray().add(new JsonObject().put("index", 0).put("message", message)
            .put("finish_reason", finishReason)))
        .put("usage", new JsonObject().put("prompt_tokens", 100).put("completion_tokens", 20).put("total_tokens", 120));
  }

  private static void respond(HttpServerRequest req, JsonObject body) {
    req.response().putHeader("content-type", "application/json").end(body.encode());
  }

  /** The tool results the agent sent back in a request, in order. */
  public static List<JsonObject> toolResults(JsonObject request) {
    List<JsonObject> out = new ArrayList<>();
    for (Object m : request.getJsonArray("messages")) {
      JsonObject message = (JsonObject) m;
      if ("tool".equals(message.getString("role"))) {
        out.add(new JsonObject(message.getString("content")));
      }
    }
    return out;
  }

  @Override
  public void close() {
    server.close().await();
  }
}
