package dev.quarry.api;

import dev.quarry.agent.AnalysisOutcome;
import dev.quarry.agent.AnalysisEvent;
import dev.quarry.agent.AnalysisRequest;
import dev.quarry.agent.LiveAnalysis;
import dev.quarry.sandbox.Scope;
import io.vertx.core.Future;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Quarry as an OpenAI-compatible model: {@code POST /v1/chat/completions} and {@code GET /v1/models}
 * under the same base URL and API keys as the rest of the API, so that an OpenAI client pointed at
 * {@code https://quarry.example/v1} with a Quarry key asks questions over the tenant's documents.
 *
 * <p>Each completion is an analysis like any other (stored, listed, replayable, under the same
 * quotas and budgets): the last user message is its question, earlier user and assistant messages
 * the conversation it continues, system and developer messages the caller's instructions. What an
 * analysis cannot honour is refused in OpenAI's error shape rather than ignored; sampling settings,
 * which change nothing about an analysis' result a caller could check, are accepted and have no
 * effect. The program, citations and the analysis' id travel in an extra top-level {@code quarry}
 * object, which OpenAI clients keep as an unknown field.
 */
final class OpenAiRoutes {
  /** The model name of an analysis over the tenant's documents. */
  static final String MODEL = "quarry";

  /** Accepted, and without effect on an analysis (its model settings are the gateway's). */
  private static final Set<String> ACCEPTED = Set.of("model", "messages", "stream", "stream_options", "user",
      "metadata", "store", "temperature", "top_p", "presence_penalty", "frequency_penalty", "seed", "max_tokens",
      "max_completion_tokens", "reasoning_effort", "service_tier", "parallel_tool_calls",
      // Quarry's own: the documents the analysis may see and preload, and its budgets.
      "document_ids", "preload", "budgets");
  /** Understood but not honoured: each one changes what comes back, so it is refused, not ignored. */
  private static final Set<String> REFUSED = Set.of("n", "logprobs", "top_logprobs", "tools", "functions",
      "tool_choice", "function_call", "response_format", "audio", "modalities", "prediction", "logit_bias", "stop",
      "web_search_options");

  private final AnalysisRoutes analyses;
  private final long created = Instant.now().getEpochSecond();

  OpenAiRoutes(AnalysisRoutes analyses) {
    this.analyses = analyses;
  }

  void mount(Router router, io.vertx.core.Handler<RoutingContext> tenant, io.vertx.core.Handler<RoutingContext> takeBody,
      io.vertx.core.Handler<RoutingContext> body, io.vertx.core.Handler<RoutingContext> bodyRead) {
    router.post("/v1/chat/completions").handler(tenant).handler(takeBody).handler(body).handler(bodyRead)
        .handler(this::complete);
    router.get("/v1/models").handler(tenant).handler(this::models);
    router.get("/v1/models/:model").handler(tenant).handler(this::model);
  }

  /**
   * Whether a request's errors take OpenAI's shape: everything under the paths OpenAI clients call,
   * authentication and quota refusals included, since those come before any route is chosen.
   */
  static boolean speaksOpenAi(RoutingContext ctx) {
    String path;
    try {
      path = ctx.normalizedPath();
    } catch (IllegalArgumentException e) {
      return false;
    }
    return path.startsWith("/v1/chat/") || path.equals("/v1/models") || path.startsWith("/v1/models/");
  }

  private JsonObject modelObject() {
    return new JsonObject().put("id", MODEL).put("object", "model").put("created", created).put("owned_by", "quarry");
  }

  private void models(RoutingContext ctx) {
    ApiRoutes.replyJson(ctx, 200, new JsonObject().put("object", "list").put("data", new JsonArray().add(modelObject())));
  }

  private void model(RoutingContext ctx) {
    String name = ctx.pathParam("model");
    if (!MODEL.equals(name)) {
      ctx.fail(new ApiError(404, "model_not_found", "the model '" + name + "' does not exist; this endpoint serves '"
          + MODEL + "'"));
      return;
    }
    ApiRoutes.replyJson(ctx, 200, modelObject());
  }

  private void complete(RoutingContext ctx) {
    JsonObject body = Requests.jsonObject(ctx.body().buffer());
    Chat chat = chat(body);
    UUID tenant = ApiRoutes.tenant(ctx);
    // A conversation whose last assistant turn is an answer of this tenant's goes on from that
    // analysis (its variables rebuilt); otherwise the earlier turns are context for a fresh one.
    List<AnalysisRequest.Turn> earlier = chat.request().conversation();
    Future<java.util.Optional<UUID>> follows = earlier.isEmpty() || !earlier.getLast().role().equals("assistant")
        ? Future.succeededFuture(java.util.Optional.empty())
        : analyses.service().store().answeredWith(tenant, earlier.getLast().text());
    follows.compose(f -> analyses.startOrFollow(tenant, chat.request(), f.orElse(null), true))
        .onSuccess(live -> {
          if (chat.stream()) {
            stream(ctx, live, chat.includeUsage());
          } else {
            whole(ctx, live);
          }
        })
        .onFailure(ctx::fail);
  }

  /** What a chat completion request asks, as an analysis request. */
  private record Chat(AnalysisRequest request, boolean stream, boolean includeUsage) {}

  private Chat chat(JsonObject body) {
    for (String field : body.fieldNames()) {
      if (body.getValue(field) == null) {
        continue; // clients send absent options as null
      }
      if (REFUSED.contains(field)) {
        refuseOption(field, body.getValue(field));
      } else if (!ACCEPTED.contains(field)) {
        throw invalid(field, "unrecognized request argument supplied: " + field);
      }
    }
    Object model = body.getValue("model");
    if (!(model instanceof String name)) {
      throw invalid("model", "you must provide a model parameter ('" + MODEL + "')");
    }
    if (!MODEL.equals(name)) {
      throw new ApiError(404, "model_not_found", "the model '" + name + "' does not exist; this endpoint serves '"
          + MODEL + "' (an analysis over your documents)");
    }
    boolean stream = bool(body, "stream");
    boolean includeUsage = false;
    Object options = body.getValue("stream_options");
    if (options != null) {
      if (!(options instanceof JsonObject o)) {
        throw invalid("stream_options", "'stream_options' must be an object");
      }
      if (!stream) {
        throw invalid("stream_options", "'stream_options' is only allowed when 'stream' is true");
      }
      for (String key : o.fieldNames()) {
        if (!key.equals("include_usage") && !key.equals("include_obfuscation")) {
          throw invalid("stream_options." + key, "unrecognized stream option: " + key);
        }
      }
      includeUsage = bool(o, "include_usage");
    }
    Conversation conversation = conversation(body.getValue("messages"));
    List<UUID> scope = AnalysisRoutes.uuids(body.getValue("document_ids"), "document_ids");
    List<UUID> preload = AnalysisRoutes.preload(body.getValue("preload"), scope);
    AnalysisRequest request = new AnalysisRequest(conversation.question(), new Scope(Set.copyOf(scope)), preload,
        analyses.budgets(body.getValue("budgets")), conversation.earlier(), conversation.instructions());
    return new Chat(request, stream, includeUsage);
  }

  private static void refuseOption(String field, Object value) {
    switch (field) {
      case "n" -> {
        if (!(value instanceof Number n) || n.intValue() != 1 || n.doubleValue() != 1) {
          throw invalid("n", "only n=1 is supported: an analysis has one answer");
        }
      }
      case "logprobs" -> {
        if (!Boolean.FALSE.equals(value)) {
          throw invalid("logprobs", "logprobs are not available: the answer is an analysis' result, not one sampling");
        }
      }
      case "tool_choice" -> {
        if (!"none".equals(value) && !"auto".equals(value)) {
          throw invalid("tool_choice", "tools of the caller's own are not supported; Quarry runs its own code tool");
        }
      }
      case "tools", "functions" -> {
        if (!(value instanceof JsonArray a) || !a.isEmpty()) {
          throw invalid(field, "tools of the caller's own are not supported; Quarry runs its own code tool");
        }
      }
      case "response_format" -> {
        if (!(value instanceof JsonObject o) || !"text".equals(o.getString("type"))) {
          throw invalid("response_format", "only the 'text' response format is supported: the answer is prose"
              + " with references; the program and citations come in the 'quarry' object");
        }
      }
      case "modalities" -> {
        if (!(value instanceof JsonArray a) || !a.getList().equals(List.of("text"))) {
          throw invalid("modalities", "only the 'text' modality is supported");
        }
      }
      case "audio" -> throw invalid("audio", "audio output is not supported");
      case "stop" -> throw invalid("stop", "stop sequences are not supported: an answer is not cut short");
      default -> throw invalid(field, "'" + field + "' is not supported by this endpoint");
    }
  }

  /** The question, the turns before it and the caller's instructions, from OpenAI's messages. */
  private record Conversation(String question, List<AnalysisRequest.Turn> earlier, String instructions) {}

  private Conversation conversation(Object raw) {
    if (!(raw instanceof JsonArray messages) || messages.isEmpty()) {
      throw invalid("messages", raw == null ? "you must provide 'messages'" : "'messages' must be a non-empty list");
    }
    List<AnalysisRequest.Turn> turns = new ArrayList<>();
    StringBuilder instructions = new StringBuilder();
    for (int i = 0; i < messages.size(); i++) {
      String where = "messages[" + i + "]";
      if (!(messages.getValue(i) instanceof JsonObject message)) {
        throw invalid(where, where + " must be an object with 'role' and 'content'");
      }
      Object role = message.getValue("role");
      if (!(role instanceof String r)) {
        throw invalid(where + ".role", where + " has no 'role'");
      }
      if (message.getValue("tool_calls") != null || message.getValue("function_call") != null) {
        throw invalid(where, "tool calls of the caller's own are not supported (" + where + ")");
      }
      switch (r) {
        case "system", "developer" -> {
          if (!instructions.isEmpty()) {
            instructions.append("\n\n");
          }
          instructions.append(text(message, where));
        }
        case "user", "assistant" -> turns.add(new AnalysisRequest.Turn(r, text(message, where)));
        case "tool", "function" -> throw invalid(where + ".role", "messages with role '" + r
            + "' answer tools of the caller's own, which this endpoint does not support");
        default -> throw invalid(where + ".role", "unknown role '" + r + "' in " + where);
      }
    }
    if (turns.isEmpty() || !turns.getLast().role().equals("user")) {
      throw invalid("messages", "the last message other than system ones must be the user's: it is the question");
    }
    String question = turns.removeLast().text();
    int maxChars = analyses.service().settings().maxQuestionChars();
    String problem = analyses.questionProblem(question);
    if (problem != null) {
      throw invalid("messages", "the last user message (the question) " + problem);
    }
    if (instructions.length() > maxChars) {
      throw invalid("messages", "the system messages have " + instructions.length()
          + " characters together; the limit is " + maxChars);
    }
    return new Conversation(question, recent(turns, 4L * maxChars), instructions.toString());
  }

  /**
   * The most recent turns that fit in {@code budget} characters: a long chat keeps going, and the
   * model sees what a follow-up most likely refers to.
   */
  private static List<AnalysisRequest.Turn> recent(List<AnalysisRequest.Turn> turns, long budget) {
    long used = 0;
    int first = turns.size();
    while (first > 0 && used + turns.get(first - 1).text().length() <= budget) {
      used += turns.get(--first).text().length();
    }
    return List.copyOf(turns.subList(first, turns.size()));
  }

  /** A message's text: a string, or text parts; anything else (images, audio, files) is refused. */
  private static String text(JsonObject message, String where) {
    Object content = message.getValue("content");
    if (content instanceof String s) {
      return s;
    }
    if (content == null) {
      return "";
    }
    if (!(content instanceof JsonArray parts)) {
      throw invalid(where + ".content", where + ".content must be a string or a list of text parts");
    }
    StringBuilder text = new StringBuilder();
    for (int j = 0; j < parts.size(); j++) {
      String part = where + ".content[" + j + "]";
      if (!(parts.getValue(j) instanceof JsonObject p) || !(p.getValue("type") instanceof String type)) {
        throw invalid(part, part + " must be an object with a 'type'");
      }
      if (!type.equals("text")) {
        throw invalid(part, "content parts of type '" + type + "' are not supported (" + part
            + "): Quarry answers from the tenant's documents and takes text only");
      }
      if (!(p.getValue("text") instanceof String s)) {
        throw invalid(part, part + " has no 'text'");
      }
      if (!text.isEmpty()) {
        text.append('\n');
      }
      text.append(s);
    }
    return text.toString();
  }

  private static boolean bool(JsonObject o, String field) {
    Object v = o.getValue(field);
    if (v != null && !(v instanceof Boolean)) {
      throw invalid(field, "'" + field + "' must be true or false");
    }
    return Boolean.TRUE.equals(v);
  }

  private static ApiError invalid(String param, String message) {
    return new ApiError(400, "invalid_request", message).withParam(param);
  }

  /** Waits for the end; a client that goes away cancels the analysis (nobody waits for its answer). */
  private void whole(RoutingContext ctx, LiveAnalysis live) {
    AtomicBoolean answered = new AtomicBoolean();
    ctx.response().closeHandler(v -> {
      if (!answered.get()) {
        live.cancel();
      }
    });
    live.finished().onComplete(done -> answered.set(true)).onSuccess(analysis -> {
      if (!AnalysisOutcome.Status.SUCCEEDED.wire().equals(analysis.getString("status"))) {
        ctx.fail(failure(analysis));
        return;
      }
      JsonObject usage = analysis.getJsonObject("usage", new JsonObject());
      JsonObject message = new JsonObject().put("role", "assistant").put("content", analysis.getString("answer"))
          .put("refusal", null);
      JsonObject completion = new JsonObject()
          .put("id", completionId(live))
          .put("object", "chat.completion")
          .put("created", created(analysis))
          .put("model", MODEL)
          .put("choices", new JsonArray().add(new JsonObject().put("index", 0).put("message", message)
              .put("logprobs", null).put("finish_reason", "stop")))
          .put("usage", openAiUsage(usage))
          .put("quarry", quarry(analysis));
      ApiRoutes.replyJson(ctx, 200, completion);
    }).onFailure(ctx::fail);
  }

  private static JsonObject quarry(JsonObject analysis) {
    return new JsonObject()
        .put("analysis_id", analysis.getString("id"))
        .put("status", analysis.getString("status"))
        .put("program", analysis.getString("program"))
        .put("citations", analysis.getJsonArray("citations", new JsonArray()))
        .put("usage", analysis.getJsonObject("usage"));
  }

  private static JsonObject openAiUsage(JsonObject usage) {
    long prompt = usage.getLong("prompt_tokens", 0L);
    long completion = usage.getLong("completion_tokens", 0L);
    return new JsonObject().put("prompt_tokens", prompt).put("completion_tokens", completion)
        .put("total_tokens", prompt + completion);
  }

  /**
   * An analysis that ended without an answer, as an OpenAI error: the model's endpoint failing is a
   * 502, no sandbox a 503, a budget or an answer the model never got right a 422; the analysis' id
   * and its error type come along so that the caller can look it up.
   */
  private static ApiError failure(JsonObject analysis) {
    JsonObject error = analysis.getJsonObject("error", new JsonObject());
    String type = error.getString("type", "Failed");
    String message = "the analysis " + analysis.getString("id") + " ended without an answer ("
        + analysis.getString("status") + ", " + type + "): " + error.getString("message", "");
    int status = switch (type) {
      case "ModelRejected", "ModelUnavailable", "QuotaExceeded" -> 502;
      case "SandboxCapacityExhausted", "SandboxUnavailable" -> 503;
      case "Internal", "StorageFailed" -> 500;
      case "Cancelled" -> 409;
      default -> 422;
    };
    return new ApiError(status, "analysis_" + analysis.getString("status"), message).withParam(null)
        .withAnalysis(analysis.getString("id"), type);
  }

  private static String completionId(LiveAnalysis live) {
    return "chatcmpl-" + live.id().toString().replace("-", "");
  }

  private static long created(JsonObject analysis) {
    String at = analysis.getString("created_at");
    return at == null ? Instant.now().getEpochSecond() : Instant.parse(at).getEpochSecond();
  }

  /**
   * Streams the analysis as {@code chat.completion.chunk} events: its progress (the model's code,
   * what each cell printed, its callbacks and errors) as {@code reasoning_content}, which chat front
   * ends show as the model's thinking, then the answer as content, then {@code [DONE]}.
   */
  private void stream(RoutingContext ctx, LiveAnalysis live, boolean includeUsage) {
    HttpServerResponse response = ctx.response();
    EventStream.open(response, ctx.vertx(), analyses.heartbeat()).putHeader("X-Analysis-Id", live.id().toString());
    String id = completionId(live);
    long createdAt = Instant.now().getEpochSecond();
    ChunkWriter chunks = new ChunkWriter(response, id, createdAt, includeUsage);
    chunks.delta(new JsonObject().put("role", "assistant").put("content", ""));
    EventStream.follow(ctx.request(), ctx.vertx(), live, 0, event -> {
      JsonObject e = new JsonObject(event.json());
      switch (event.type()) {
        case AnalysisEvent.STARTED -> chunks.reasoning("Analysis " + live.id() + " started.\n");
        case AnalysisEvent.MODEL_TURN -> {
          String content = e.getString("content");
          if (content != null && !content.isBlank() && !e.getJsonArray("tool_calls", new JsonArray()).isEmpty()) {
            chunks.reasoning(content + "\n");
          }
        }
        case AnalysisEvent.CODE -> chunks.reasoning("\n```python\n" + e.getString("code") + "\n```\n");
        case AnalysisEvent.OUTPUT -> chunks.reasoning(e.getString("text"));
        case AnalysisEvent.CALLBACK -> chunks.reasoning("[" + e.getString("kind") + "] "
            + e.getValue("arguments") + "\n");
        case AnalysisEvent.CELL_RESULT -> {
          JsonObject result = e.getJsonObject("result", new JsonObject());
          JsonObject error = result.getJsonObject("error");
          chunks.reasoning((error == null ? "" : error.getString("type") + ": " + error.getString("message") + "\n")
              + "(step " + e.getValue("step") + ": " + result.getValue("duration_ms") + " ms)\n");
        }
        default -> {}
      }
      if (!event.terminal()) {
        return;
      }
      if (event.type().equals(AnalysisEvent.ANSWER)) {
        chunks.delta(new JsonObject().put("content", e.getString("answer")));
        JsonObject last = chunks.chunk(new JsonObject(), "stop");
        last.put("quarry", new JsonObject().put("analysis_id", live.id().toString()).put("status", e.getString("status"))
            .put("program", e.getString("program")).put("citations", e.getJsonArray("citations"))
            .put("usage", e.getJsonObject("usage")));
        chunks.write(last);
        chunks.usage(e.getJsonObject("usage", new JsonObject()));
      } else {
        // OpenAI's own way to fail a stream that has begun: an event holding an error object.
        JsonObject analysis = new JsonObject().put("id", live.id().toString()).put("status", e.getString("status"))
            .put("error", e.getJsonObject("error"));
        ApiError failure = failure(analysis);
        response.write("data: " + WireFormat.openAiError(failure).encode() + "\n\n");
      }
      response.end("data: [DONE]\n\n");
    }, live::cancel);
  }

  /** Writes the chunks of one streamed completion, each with the same id, time and model. */
  private record ChunkWriter(HttpServerResponse response, String id, long created, boolean includeUsage) {

    JsonObject chunk(JsonObject delta, String finishReason) {
      JsonObject chunk = new JsonObject().put("id", id).put("object", "chat.completion.chunk").put("created", created)
          .put("model", MODEL).put("choices", new JsonArray().add(new JsonObject().put("index", 0).put("delta", delta)
              .put("logprobs", null).put("finish_reason", finishReason)));
      if (includeUsage) {
        chunk.put("usage", null);
      }
      return chunk;
    }

    void write(JsonObject chunk) {
      response.write("data: " + chunk.encode() + "\n\n");
    }

    void delta(JsonObject delta) {
      write(chunk(delta, null));
    }

    void reasoning(String text) {
      if (text != null && !text.isEmpty()) {
        delta(new JsonObject().put("reasoning_content", text));
      }
    }

    void usage(JsonObject usage) {
      if (includeUsage) {
        write(new JsonObject().put("id", id).put("object", "chat.completion.chunk").put("created", created)
            .put("model", MODEL).put("choices", new JsonArray()).put("usage", openAiUsage(usage)));
      }
    }
  }
}
