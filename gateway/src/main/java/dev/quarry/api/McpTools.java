package dev.quarry.api;

import dev.quarry.agent.AnalysisOutcome;
import dev.quarry.agent.AnalysisEvent;
import dev.quarry.agent.AnalysisRequest;
import dev.quarry.agent.LiveAnalysis;
import dev.quarry.sandbox.Scope;
import io.modelcontextprotocol.server.McpAsyncServerExchange;
import io.modelcontextprotocol.server.McpServerFeatures.AsyncToolSpecification;
import io.modelcontextprotocol.spec.McpSchema;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.IntSupplier;
import reactor.core.publisher.Mono;

/**
 * What Quarry offers over MCP: ask (an analysis, its progress as MCP progress notifications),
 * search, list and read documents, run code in a sandbox.
 *
 * <p>Every tool but {@code ask} is one call of the gateway's own REST API over loopback, with the
 * caller's key: the same validation, quotas, scopes and tenant fences by construction, and one
 * wording of each error, which comes back as the tool's error. {@code ask} starts its analysis in
 * process, through the same quota checks as {@code POST /v1/analyses}, to follow its events and to
 * cancel it when the client cancels the call.
 */
final class McpTools {
  private static final long MAX_READ_CHARS = 200_000;

  private final AnalysisRoutes analyses;
  private final HttpClient http;
  private final IntSupplier port;

  McpTools(Vertx vertx, AnalysisRoutes analyses, IntSupplier port) {
    this.analyses = analyses;
    this.http = vertx.createHttpClient();
    this.port = port;
  }

  List<AsyncToolSpecification> specifications() {
    List<AsyncToolSpecification> tools = new ArrayList<>();
    tools.add(tool("search", "Hybrid search (vectors and BM25) over your documents; each hit carries its expanded"
        + " context, document, pages, section path and item references.",
        schema(Map.of(
            "query", Map.of("type", "string", "description", "what to look for"),
            "limit", Map.of("type", "integer", "minimum", 1, "description", "how many hits (default 10)"),
            "document_ids", ids("only these documents")), List.of("query")),
        (exchange, args) -> rest(exchange, HttpMethod.POST, "/v1/search", new JsonObject(args))));
    tools.add(tool("list_documents", "Your documents, oldest first, a page at a time.",
        schema(Map.of(
            "limit", Map.of("type", "integer", "minimum", 1, "maximum", ApiRoutes.DOCUMENTS_PAGE_MAX,
                "description", "documents per page (default 100)"),
            "cursor", Map.of("type", "string", "description", "next_cursor of the previous page")), List.of()),
        (exchange, args) -> {
          JsonObject a = new JsonObject(args);
          String path = "/v1/documents?limit=" + a.getValue("limit", 100)
              + (a.getValue("cursor") == null ? "" : "&cursor=" + encode(String.valueOf(a.getValue("cursor"))));
          return rest(exchange, HttpMethod.GET, path, null);
        }));
    tools.add(tool("read_document", "One document's metadata, full text, items (one JSON object a line, with labels"
        + " and pages) or section tree, a slice of characters at a time.",
        schema(Map.of(
            "document_id", Map.of("type", "string", "format", "uuid"),
            "part", Map.of("type", "string", "enum", List.of("metadata", "content", "items", "toc"),
                "description", "what to read (default content)"),
            "offset", Map.of("type", "integer", "minimum", 0, "description", "first character (default 0)"),
            "max_chars", Map.of("type", "integer", "minimum", 1, "maximum", MAX_READ_CHARS,
                "description", "characters at most (default 50000)")), List.of("document_id")),
        this::read));
    tools.add(tool("run_code", "Runs Python in a fresh sandbox over your documents, in Quarry's restricted language"
        + " (await search(...), await list_documents(), await llm(...), /documents); returns stdout, stderr and"
        + " any error.",
        schema(Map.of(
            "code", Map.of("type", "string"),
            "document_ids", ids("only these documents are visible"),
            "limits", Map.of("type", "object", "additionalProperties", false, "properties", Map.of(
                "wall_time_ms", Map.of("type", "integer", "minimum", 1),
                "max_output_chars", Map.of("type", "integer", "minimum", 1)))), List.of("code")),
        (exchange, args) -> rest(exchange, HttpMethod.POST, "/v1/executions", new JsonObject(args)).map(result -> {
          // The program's own failure is the tool's error: the caller sees it as one.
          Object structured = result.structuredContent();
          boolean failed = structured instanceof Map<?, ?> m && Boolean.FALSE.equals(m.get("success"));
          return failed ? McpSchema.CallToolResult.builder().content(result.content())
              .structuredContent(structured).isError(true).build() : result;
        })));
    if (analyses == null || !analyses.service().settings().modelConfigured()) {
      return tools; // no model configured on this gateway: no analyses to ask for
    }
    tools.add(tool("ask", "Answers a question over your documents: a model writes and runs code until it can answer."
        + " Returns the answer, the program that reproduces it and its citations. Takes seconds to minutes;"
        + " progress comes as notifications when you pass a progress token.",
        schema(Map.of(
            "question", Map.of("type", "string"),
            "document_ids", ids("only these documents"),
            "follows", Map.of("type", "string", "description", "the analysis_id of an earlier answer to follow up:"
                + " the question goes on from it, with its documents, and its code finds the earlier code's variables"),
            "budgets", Map.of("type", "object", "description",
                "any of model_turns, wall_time_ms, tokens, execute_code_calls, search_calls, llm_calls, list_documents_calls")),
            List.of("question")),
        (RequestCall) this::ask));
    return tools;
  }

  private interface Call {
    Mono<McpSchema.CallToolResult> apply(McpAsyncServerExchange exchange, Map<String, Object> args);
  }

  /** A tool that also reads the request itself (its progress token). */
  private interface RequestCall {
    Mono<McpSchema.CallToolResult> apply(McpAsyncServerExchange exchange, McpSchema.CallToolRequest request,
        Map<String, Object> args);
  }

  private static AsyncToolSpecification tool(String name, String description, Map<String, Object> schema, Call call) {
    return tool(name, description, schema, (RequestCall) (exchange, request, args) -> call.apply(exchange, args));
  }

  private static AsyncToolSpecification tool(String name, String description, Map<String, Object> schema,
      RequestCall call) {
    return AsyncToolSpecification.builder()
        .tool(McpSchema.Tool.builder().name(name).description(description).inputSchema(schema).build())
        .callHandler((exchange, request) -> {
          Map<String, Object> args = request.arguments() == null ? Map.of() : request.arguments();
          Set<?> allowed = ((Map<?, ?>) schema.get("properties")).keySet();
          for (String key : args.keySet()) {
            if (!allowed.contains(key)) {
              return Mono.just(error("unknown argument '" + key + "' for " + name + "; it takes " + allowed));
            }
          }
          for (Object required : (List<?>) schema.get("required")) {
            if (args.get(required) == null) {
              return Mono.just(error("argument '" + required + "' is required for " + name));
            }
          }
          // Mono.defer: a handler that refuses its arguments as it reads them fails this Mono, not the
          // session's dispatch, which would leave the call unanswered.
          return Mono.defer(() -> call.apply(exchange, request, args))
              .onErrorResume(ToolError.class, e -> Mono.just(error(e.getMessage())))
              .onErrorResume(ApiError.class, e -> Mono.just(error(e.getMessage())));
        })
        .build();
  }

  private static Map<String, Object> schema(Map<String, Object> properties, List<String> required) {
    return Map.of("type", "object", "properties", properties, "required", required, "additionalProperties", false);
  }

  private static Map<String, Object> ids(String description) {
    return Map.of("type", "array", "items", Map.of("type", "string", "format", "uuid"), "description", description);
  }

  /** A failure the caller can act on, shown as the tool's error. */
  private static final class ToolError extends RuntimeException {
    ToolError(String message) {
      super(message, null, false, false);
    }
  }

  /** A tool's error, as the caller (and the model behind it) reads it: without host paths. */
  private static McpSchema.CallToolResult error(String message) {
    return McpSchema.CallToolResult.builder().addTextContent(dev.quarry.config.HostPaths.redact(message))
        .isError(true).build();
  }

  private static McpSchema.CallToolResult json(Object value) {
    String text = value instanceof JsonObject o ? o.encode() : String.valueOf(value);
    var builder = McpSchema.CallToolResult.builder().addTextContent(text);
    if (value instanceof JsonObject o) {
      builder.structuredContent(o.getMap());
    }
    return builder.build();
  }

  /** One call of the REST API as the caller; a 4xx or 5xx becomes the tool's error with the API's message. */
  private Mono<McpSchema.CallToolResult> rest(McpAsyncServerExchange exchange, HttpMethod method, String path,
      JsonObject body) {
    return fetch(exchange, method, path, body).map(r -> {
      String type = String.valueOf(r.type());
      return type.startsWith("application/json") ? json(new JsonObject(r.body())) : json(r.body());
    });
  }

  private record Fetched(int status, String type, String body) {}

  /** A request to the REST API as the caller (its API key). */
  private RequestOptions options(McpAsyncServerExchange exchange, HttpMethod method, String path) {
    String key = (String) exchange.transportContext().get(McpTransport.API_KEY);
    return new RequestOptions().setMethod(method).setHost("127.0.0.1").setPort(port.getAsInt())
        .setURI(path).putHeader(HttpHeaders.AUTHORIZATION, "Bearer " + key).putHeader(HttpHeaders.ACCEPT, "application/json");
  }

  /** The message of an API error body, or a fallback naming nothing. */
  private static String errorMessage(String body, int status) {
    try {
      return new JsonObject(body).getJsonObject("error").getString("message");
    } catch (RuntimeException e) {
      return "HTTP " + status;
    }
  }

  private Mono<Fetched> fetch(McpAsyncServerExchange exchange, HttpMethod method, String path, JsonObject body) {
    RequestOptions options = options(exchange, method, path);
    Future<Fetched> call = http.request(options).compose(request -> {
      if (body != null) {
        request.putHeader(HttpHeaders.CONTENT_TYPE, "application/json");
        return request.send(body.encode());
      }
      return request.send();
    }).compose(response -> response.body().map(b -> fetched(response, b)));
    return Mono.fromCompletionStage(call.toCompletionStage()).flatMap(r -> {
      if (r.status() >= 400) {
        return Mono.error(new ToolError(errorMessage(r.body(), r.status())));
      }
      return Mono.just(r);
    });
  }

  private static Fetched fetched(HttpClientResponse response, Buffer body) {
    return new Fetched(response.statusCode(), response.getHeader(HttpHeaders.CONTENT_TYPE), body.toString());
  }

  private Mono<McpSchema.CallToolResult> read(McpAsyncServerExchange exchange, Map<String, Object> args) {
    JsonObject a = new JsonObject(args);
    UUID id;
    try {
      // Never a path piece from the caller as it is: only a UUID goes into the URL.
      id = UUID.fromString(String.valueOf(a.getValue("document_id")));
    } catch (IllegalArgumentException e) {
      return Mono.just(error("argument 'document_id' must be a document id (a UUID), got " + a.getValue("document_id")));
    }
    String part = String.valueOf(a.getValue("part", "content"));
    String suffix = switch (part) {
      case "metadata" -> "";
      case "content" -> "/content";
      case "items" -> "/items";
      case "toc" -> "/toc";
      default -> null;
    };
    if (suffix == null) {
      return Mono.just(error("argument 'part' must be one of metadata, content, items, toc; got " + part));
    }
    long offset = number(a, "offset", 0, 0, Long.MAX_VALUE);
    long max = number(a, "max_chars", 50_000, 1, MAX_READ_CHARS);
    return window(exchange, "/v1/documents/" + id + suffix, offset, max).map(window -> {
      long total = window.total();
      long from = Math.min(offset, total);
      long to = from + window.text().length();
      JsonObject out = new JsonObject().put("document_id", id.toString()).put("part", part).put("offset", from)
          .put("total_chars", total).put("next_offset", to < total ? to : null)
          .put("text", window.text());
      return McpSchema.CallToolResult.builder().addTextContent(window.text()
              + (to < total ? "\n[… " + (total - to) + " more characters: call again with offset=" + to + "]" : ""))
          .structuredContent(out.getMap()).build();
    });
  }

  /**
   * Characters {@code offset} to {@code offset + max} of an answer of the REST API, as the caller,
   * read as it arrives ({@link TextWindow}): the rest of it is counted, not kept.
   */
  private Mono<TextWindow> window(McpAsyncServerExchange exchange, String path, long offset, long max) {
    Future<TextWindow> call = http.request(options(exchange, HttpMethod.GET, path)).compose(request -> request.send())
        .compose(response -> {
          if (response.statusCode() >= 400) {
            return response.body().compose(b -> Future.failedFuture(new ToolError(errorMessage(b.toString(),
                response.statusCode()))));
          }
          TextWindow window = new TextWindow(offset, max);
          io.vertx.core.Promise<TextWindow> read = io.vertx.core.Promise.promise();
          response.handler(window::add);
          response.exceptionHandler(read::tryFail);
          response.endHandler(v -> read.tryComplete(window.finish()));
          return read.future();
        });
    return Mono.fromCompletionStage(call.toCompletionStage());
  }

  private static long number(JsonObject a, String name, long dflt, long min, long max) {
    Object v = a.getValue(name);
    if (v == null) {
      return dflt;
    }
    if (!(v instanceof Integer || v instanceof Long) || ((Number) v).longValue() < min || ((Number) v).longValue() > max) {
      throw new ToolError("argument '" + name + "' must be an integer from " + min + " to " + max + ", got " + v);
    }
    return ((Number) v).longValue();
  }

  private Mono<McpSchema.CallToolResult> ask(McpAsyncServerExchange exchange, McpSchema.CallToolRequest call,
      Map<String, Object> args) {
    JsonObject a = new JsonObject(args);
    AnalysisRequest request;
    UUID follows = null;
    try {
      Object followed = a.getValue("follows");
      if (followed != null) {
        String raw = String.valueOf(followed);
        try {
          follows = Requests.documentId(raw);
        } catch (ApiError e) {
          throw new ToolError("argument 'follows' must be an analysis_id (a UUID), got '"
              + raw.substring(0, Math.min(40, raw.length())) + "'");
        }
      }
      if (!(a.getValue("question") instanceof String question)) {
        throw new ToolError("argument 'question' must be a non-empty string");
      }
      String problem = analyses.questionProblem(question);
      if (problem != null) {
        throw new ToolError("argument 'question' " + problem);
      }
      List<UUID> scope = AnalysisRoutes.uuids(a.getValue("document_ids"), "document_ids");
      request = new AnalysisRequest(question, new Scope(Set.copyOf(scope)), List.of(),
          analyses.budgets(a.getValue("budgets")));
    } catch (ApiError e) {
      return Mono.just(error(e.getMessage()));
    }
    UUID tenant = (UUID) exchange.transportContext().get(McpTransport.TENANT);
    UUID followsId = follows;
    Object token = call.meta() == null ? null : call.meta().get("progressToken");
    return Mono.<McpSchema.CallToolResult>create(sink -> {
      LiveAnalysis[] running = new LiveAnalysis[1];
      sink.onCancel(() -> {
        if (running[0] != null) {
          running[0].cancel();
        }
      });
      // The client closing the call's stream cancels the analysis (the SDK's server does not act on
      // MCP's notifications/cancelled, so a dropped connection is the signal there is).
      Object gone = exchange.transportContext().get(McpTransport.GONE);
      if (gone instanceof Future<?> left) {
        left.onComplete(v -> {
          if (running[0] != null) {
            running[0].cancel();
          }
        });
      }
      analyses.startOrFollow(tenant, request, followsId, false).onFailure(e -> sink.success(error(e instanceof ApiError api ? api.getMessage()
          : "the analysis could not start: " + e.getMessage()))).onSuccess(live -> {
            running[0] = live;
            if (gone instanceof Future<?> left && left.isComplete()) {
              live.cancel();
            }
            if (token != null) {
              // In order: each is subscribed at once, on the listener's thread, and written through this
              // connection's context in the order it was subscribed.
              live.listen(0, event -> {
                String message = progress(event);
                if (message != null) {
                  exchange.progressNotification(new McpSchema.ProgressNotification(token, (double) event.seq(), null,
                      message)).subscribe(null, e -> {});
                }
              });
            }
            live.finished().onSuccess(analysis -> sink.success(answer(analysis)))
                .onFailure(e -> sink.success(error("the analysis failed in the gateway: " + e.getMessage())));
          });
    });
  }

  /** What one event of an analysis says as a progress message; null for events not worth one. */
  static String progress(AnalysisEvent event) {
    JsonObject e = new JsonObject(event.json());
    return switch (event.type()) {
      case AnalysisEvent.STARTED -> "analysis " + e.getString("analysis_id") + " started";
      case AnalysisEvent.CODE -> "step " + e.getValue("step") + ": running code\n" + e.getString("code");
      case AnalysisEvent.OUTPUT -> "step " + e.getValue("step") + " printed: " + e.getString("text");
      case AnalysisEvent.CALLBACK -> "step " + e.getValue("step") + " called " + e.getString("kind");
      case AnalysisEvent.CELL_RESULT -> "step " + e.getValue("step") + " ended in "
          + e.getJsonObject("result", new JsonObject()).getValue("duration_ms") + " ms";
      case AnalysisEvent.ANSWER -> "answered";
      case AnalysisEvent.FAILED -> "ended without an answer";
      default -> null;
    };
  }

  static McpSchema.CallToolResult answer(JsonObject analysis) {
    JsonObject out = new JsonObject().put("analysis_id", analysis.getString("id"))
        .put("status", analysis.getString("status")).put("answer", analysis.getString("answer"))
        .put("program", analysis.getString("program"))
        .put("citations", analysis.getJsonArray("citations", new JsonArray()))
        .put("error", analysis.getJsonObject("error"));
    if (!AnalysisOutcome.Status.SUCCEEDED.wire().equals(analysis.getString("status"))) {
      JsonObject error = analysis.getJsonObject("error", new JsonObject());
      return McpSchema.CallToolResult.builder().addTextContent("the analysis " + analysis.getString("id")
          + " ended without an answer (" + analysis.getString("status") + ", " + error.getString("type") + "): "
          + error.getString("message")).structuredContent(out.getMap()).isError(true).build();
    }
    return McpSchema.CallToolResult.builder().addTextContent(analysis.getString("answer"))
        .structuredContent(out.getMap()).build();
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
