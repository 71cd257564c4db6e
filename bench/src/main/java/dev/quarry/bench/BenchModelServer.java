package dev.quarry.bench;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The model stand-in of the analyses benchmark: an OpenAI-compatible chat completions endpoint on a
 * local port that, for every conversation, asks for the scripted cells one by one and then answers.
 * It keeps no script state (the number of tool results in a request says which turn it is), so any
 * number of analyses can run at once. For each conversation it notes when it finished sending a
 * reply and when the whole of the next request arrived: the span in between is all the gateway's
 * (and the sandbox's), none of it the model's.
 */
final class BenchModelServer implements AutoCloseable {
  /** The span between sending a tool-call reply and receiving the next request of the same conversation. */
  record Gap(String conversation, int cellsDone, long nanos) {}

  private final List<String> cells;
  private final HttpServer server;
  private final Map<String, Long> lastSent = new ConcurrentHashMap<>();
  private final ConcurrentLinkedQueue<Gap> gaps = new ConcurrentLinkedQueue<>();
  private final ConcurrentLinkedQueue<Long> serviceNanos = new ConcurrentLinkedQueue<>();
  private final AtomicInteger ids = new AtomicInteger();
  private final AtomicInteger refused = new AtomicInteger();
  /** While set, every request gets a 503 (the soak's model outage). */
  private volatile boolean failing;
  /** What the first turn of a conversation waits for before it is answered; none by default. */
  private volatile Supplier<Future<?>> firstTurn = () -> Future.succeededFuture();
  /** What a sandbox's llm() call waits for before it is answered; none by default. */
  private volatile Supplier<Future<?>> llmTurn = () -> Future.succeededFuture();

  BenchModelServer(Vertx vertx, List<String> cells) {
    this.cells = List.copyOf(cells);
    this.server = vertx.createHttpServer().requestHandler(this::handle);
    server.listen(0, "127.0.0.1").await();
  }

  String baseUrl() {
    return "http://127.0.0.1:" + server.actualPort() + "/v1";
  }

  /** Spans from a tool-call reply to the next request, one per cell run. */
  List<Gap> gaps() {
    return List.copyOf(gaps);
  }

  /** The server's own time per request, arrival to the end of its response. */
  List<Long> serviceNanos() {
    return List.copyOf(serviceNanos);
  }

  /** From now on answer every request with a 503, or again normally. */
  void failing(boolean failing) {
    this.failing = failing;
  }

  /** Requests answered with a 503 so far. */
  int refused() {
    return refused.get();
  }

  /**
   * Holds the first reply of every conversation until {@code think} completes, as a real model's
   * first turn (hundreds of ms at least) would. Outside every measured span: those start when a
   * reply has been sent.
   */
  void firstTurnWaitsFor(Supplier<Future<?>> think) {
    this.firstTurn = think;
  }

  /** Holds every sandbox llm() reply until {@code think} completes, as a slow model would. */
  void llmWaitsFor(Supplier<Future<?>> think) {
    this.llmTurn = think;
  }

  void reset() {
    lastSent.clear();
    gaps.clear();
    serviceNanos.clear();
  }

  private void handle(HttpServerRequest req) {
    req.body().onSuccess(body -> {
      // Arrived = the whole request is in: a model can start only then. The headers come first and
      // can be far ahead of the body's end (a sender held back by Nagle's algorithm, say).
      long arrived = System.nanoTime();
      if (!req.path().endsWith("/chat/completions")) {
        req.response().setStatusCode(404).end();
        return;
      }
      if (failing) {
        refused.incrementAndGet();
        req.response().setStatusCode(503).putHeader("content-type", "application/json")
            .end(new JsonObject().put("error", new JsonObject().put("message", "scripted outage")
                .put("type", "server_error")).encode());
        return;
      }
      JsonObject request = body.toJsonObject();
      JsonArray messages = request.getJsonArray("messages");
      if (!request.containsKey("tools")) {
        // A sandbox llm() call: not part of the script.
        llmTurn.get().onComplete(ready -> reply(req, null, arrived,
            new JsonObject().put("role", "assistant").put("content", "ok"), "stop"));
        return;
      }
      // The first user message names the analysis (its question is unique per analysis).
      String conversation = messages.getJsonObject(1).getString("content");
      int cellsDone = 0;
      for (Object m : messages) {
        if ("tool".equals(((JsonObject) m).getString("role"))) {
          cellsDone++;
        }
      }
      Long sent = lastSent.remove(conversation);
      if (sent != null) {
        gaps.add(new Gap(conversation, cellsDone, arrived - sent));
      }
      if (cellsDone == 0) {
        firstTurn.get().onComplete(ready -> {
          if (ready.failed()) {
            req.response().setStatusCode(500).end(ready.cause().toString());
            return;
          }
          // The server's own time starts when the think time is over.
          script(req, conversation, System.nanoTime(), 0);
        });
        return;
      }
      script(req, conversation, arrived, cellsDone);
    });
  }

  private void script(HttpServerRequest req, String conversation, long arrived, int cellsDone) {
    if (cellsDone < cells.size()) {
      JsonArray calls = new JsonArray().add(new JsonObject().put("id", "call_" + ids.incrementAndGet())
          .put("type", "function").put("function", new JsonObject().put("name", "execute_code")
              .put("arguments", new JsonObject().put("code", cells.get(cellsDone)).encode())));
      reply(req, conversation, arrived, new JsonObject().put("role", "assistant").put("content", (String) null)
          .put("tool_calls", calls), "tool_calls");
    } else {
      String answer = new JsonObject().put("answer", "done after " + cellsDone + " cells")
          .put("program", String.join("\n", cells)).encode();
      reply(req, null, arrived, new JsonObject().put("role", "assistant").put("content", answer), "stop");
    }
  }

  private void reply(HttpServerRequest req, String conversation, long arrived, JsonObject message, String finish) {
    JsonObject completion = new JsonObject()
        .put("id", "chatcmpl-" + ids.incrementAndGet())
        .put("object", "chat.completion")
        .put("created", System.currentTimeMillis() / 1000)
        .put("model", "bench-scripted")
        .put("choices", new JsonArray().add(new JsonObject().put("index", 0).put("message", message)
            .put("finish_reason", finish)))
        .put("usage", new JsonObject().put("prompt_tokens", 100).put("completion_tokens", 20).put("total_tokens", 120));
    req.response().putHeader("content-type", "application/json").end(completion.encode()).onComplete(done -> {
      long now = System.nanoTime();
      serviceNanos.add(now - arrived);
      if (conversation != null) {
        lastSent.put(conversation, now);
      }
    });
  }

  @Override
  public void close() {
    server.close().await();
  }
}
