package dev.quarry.api;

import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.ErrorCodes;
import java.io.IOException;

/**
 * Reads the body of {@code POST /mcp} as one JSON-RPC 2.0 message, as MCP's Streamable HTTP takes
 * it, and says exactly what is wrong with one that is not, before the MCP SDK sees it: the SDK
 * answered {@code params} that were an array or a string (and a tools/call without a name) with an
 * empty stream, a response to nothing with a 500, and scalars or a wrong {@code jsonrpc} with a
 * parse error or a result (issue 33).
 *
 * <ul>
 *   <li>not JSON (or JSON with anything after it, or a name twice in an object): {@code -32700};
 *   <li>JSON that is not one message: a scalar, a batch (MCP took batches out in 2025-06-18), an
 *       envelope without {@code "jsonrpc": "2.0"}, a method that is not a non-empty string, an id
 *       that is not a string or an integer (or is null), a request that is also a response, a
 *       response without exactly one of result and error: {@code -32600};
 *   <li>a request or notification whose {@code params} is not an object (every MCP method takes
 *       one), whose {@code _meta} or progress token is malformed, or whose params are not what its
 *       method takes (tools/call's {@code name} and {@code arguments}; initialize's protocol
 *       version, capabilities and client info; tools/list's cursor): {@code -32602}.
 * </ul>
 * An unknown method ({@code -32601}) and an unknown tool ({@code -32602}) are left to the SDK,
 * which knows its handlers and tools.
 */
final class JsonRpcMessages {
  /** One body, read: the message it holds, or why it holds none. */
  sealed interface Read permits Valid, Invalid {}

  record Valid(McpSchema.JSONRPCMessage message) implements Read {}

  /**
   * A message refused: the HTTP status of the answer, the id to answer (the message's own when it
   * had a valid one, else null), and the JSON-RPC error.
   */
  record Invalid(int status, Object id, int code, String message) implements Read {
    /** The answer's JSON-RPC body. */
    io.vertx.core.json.JsonObject body() {
      return new io.vertx.core.json.JsonObject().put("jsonrpc", McpSchema.JSONRPC_VERSION).put("id", id)
          .put("error", new io.vertx.core.json.JsonObject().put("code", code).put("message", message));
    }
  }

  private static final ObjectMapper STRICT = JsonMapper.builder()
      .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
      .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
      .disable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
      .build();

  private final McpJsonMapper json;

  JsonRpcMessages(McpJsonMapper json) {
    this.json = json;
  }

  Read read(String body) {
    JsonNode node;
    try {
      node = STRICT.readTree(body);
    } catch (IOException | RuntimeException e) {
      return new Invalid(400, null, ErrorCodes.PARSE_ERROR, "the body is not valid JSON"
          + (e instanceof com.fasterxml.jackson.core.JsonProcessingException p ? ": " + brief(p.getOriginalMessage()) : ""));
    }
    if (node == null || node.isMissingNode()) {
      return new Invalid(400, null, ErrorCodes.PARSE_ERROR, "the body is empty; send one JSON-RPC message");
    }
    if (node.isArray()) {
      return invalidRequest(null, node.isEmpty() ? "the body is an empty batch; send one JSON-RPC message"
          : "the body is a batch; MCP takes one JSON-RPC message per request (batches went in 2025-06-18)");
    }
    if (!node.isObject()) {
      return invalidRequest(null, "the body is a JSON " + node.getNodeType().name().toLowerCase(java.util.Locale.ROOT)
          + ", not a JSON-RPC message (an object)");
    }
    JsonNode idNode = node.get("id");
    Object id = validId(idNode);
    if (!node.path("jsonrpc").isTextual() || !McpSchema.JSONRPC_VERSION.equals(node.get("jsonrpc").asText())) {
      return invalidRequest(id, "\"jsonrpc\" must be the string \"2.0\"");
    }
    if (idNode != null && id == null) {
      return invalidRequest(null, "\"id\" must be a string or an integer (and not null)");
    }
    Invalid wrong = node.has("method") ? requestOrNotification(node, id) : response(node, id);
    if (wrong != null) {
      return wrong;
    }
    try {
      return new Valid(McpSchema.deserializeJsonRpcMessage(json, body));
    } catch (IOException | RuntimeException e) {
      return invalidRequest(id, "the body is not a JSON-RPC message MCP knows");
    }
  }

  private static Invalid requestOrNotification(JsonNode node, Object id) {
    JsonNode method = node.get("method");
    if (!method.isTextual() || method.asText().isEmpty()) {
      return invalidRequest(id, "\"method\" must be a non-empty string");
    }
    if (node.has("result") || node.has("error")) {
      return invalidRequest(id, "a message with a \"method\" cannot also have a \"result\" or an \"error\"");
    }
    String problem = paramsProblem(method.asText(), node.get("params"));
    if (problem == null) {
      return null;
    }
    // A request gets its answer (200, one JSON object); a notification, which none may answer, a 400.
    return new Invalid(id == null ? 400 : 200, id, ErrorCodes.INVALID_PARAMS, problem);
  }

  private static Invalid response(JsonNode node, Object id) {
    if (id == null) {
      return invalidRequest(null, "a message needs a \"method\" (a request or a notification), or an \"id\" and a"
          + " \"result\" or an \"error\" (a response)");
    }
    if (node.has("result") == node.has("error")) {
      return invalidRequest(id, "a response has exactly one of \"result\" and \"error\"");
    }
    if (node.has("error")) {
      JsonNode error = node.get("error");
      if (!error.isObject() || !error.path("code").isIntegralNumber() || !error.path("message").isTextual()) {
        return invalidRequest(id, "\"error\" must be an object with an integer \"code\" and a string \"message\"");
      }
    }
    return null;
  }

  /** What is wrong with a method's params, or null. */
  private static String paramsProblem(String method, JsonNode params) {
    if (params == null) {
      return method.equals(McpSchema.METHOD_TOOLS_CALL) || method.equals(McpSchema.METHOD_INITIALIZE)
          ? method + " takes params (an object)" : null;
    }
    if (!params.isObject()) {
      return "\"params\" must be an object, not a JSON " + params.getNodeType().name().toLowerCase(java.util.Locale.ROOT);
    }
    JsonNode meta = params.get("_meta");
    if (meta != null) {
      if (!meta.isObject()) {
        return "\"params._meta\" must be an object";
      }
      JsonNode token = meta.get("progressToken");
      if (token != null && !token.isTextual() && !token.isIntegralNumber()) {
        return "\"params._meta.progressToken\" must be a string or an integer";
      }
    }
    return switch (method) {
      case McpSchema.METHOD_TOOLS_CALL -> {
        JsonNode name = params.get("name");
        JsonNode arguments = params.get("arguments");
        if (name == null || !name.isTextual()) {
          yield "tools/call takes \"params.name\", the tool's name (a string)";
        }
        if (arguments != null && !arguments.isObject() && !arguments.isNull()) {
          yield "\"params.arguments\" must be an object of the tool's arguments";
        }
        yield null;
      }
      case McpSchema.METHOD_INITIALIZE -> {
        if (!params.path("protocolVersion").isTextual()) {
          yield "initialize takes \"params.protocolVersion\" (a string)";
        }
        if (!params.path("capabilities").isObject()) {
          yield "initialize takes \"params.capabilities\" (an object)";
        }
        JsonNode client = params.get("clientInfo");
        if (client == null || !client.isObject() || !client.path("name").isTextual()
            || !client.path("version").isTextual()) {
          yield "initialize takes \"params.clientInfo\" with a string \"name\" and \"version\"";
        }
        yield null;
      }
      case McpSchema.METHOD_TOOLS_LIST -> params.has("cursor") && !params.get("cursor").isTextual()
          && !params.get("cursor").isNull() ? "\"params.cursor\" must be a string" : null;
      default -> null;
    };
  }

  /** The id as the SDK takes it (a String, Integer or Long); null when absent or not a valid id. */
  private static Object validId(JsonNode id) {
    if (id == null) {
      return null;
    }
    if (id.isTextual()) {
      return id.asText();
    }
    if (id.isIntegralNumber() && id.canConvertToLong()) {
      return id.canConvertToInt() ? (Object) id.intValue() : (Object) id.longValue();
    }
    return null;
  }

  private static Invalid invalidRequest(Object id, String message) {
    return new Invalid(400, id, ErrorCodes.INVALID_REQUEST, message);
  }

  private static String brief(String s) {
    String line = s == null ? "" : s.lines().findFirst().orElse("");
    line = line.replaceAll("[^\\x20-\\x7e]", "?");
    return line.length() > 160 ? line.substring(0, 160) + "…" : line;
  }
}
