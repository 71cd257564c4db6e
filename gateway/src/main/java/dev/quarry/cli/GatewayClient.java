package dev.quarry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublisher;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;

/** The CLI's side of the HTTP API: JDK HttpClient and Jackson, one method per call it makes. */
final class GatewayClient {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final URI base;
  private final HttpClient http;
  /** Sent as {@code Authorization: Bearer}: a tenant's API key, or the admin token. */
  private final String bearer;

  GatewayClient(String url, String bearer) {
    this.bearer = bearer;
    String trimmed = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    URI parsed;
    try {
      parsed = URI.create(trimmed);
    } catch (IllegalArgumentException e) {
      throw new CliFailure("--url " + url + " is not a URL");
    }
    if (parsed.getScheme() == null || !parsed.getScheme().matches("https?") || parsed.getHost() == null) {
      throw new CliFailure("--url " + url + " is not an http:// or https:// URL");
    }
    this.base = parsed;
    this.http = HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5))
        .build();
  }

  String url() {
    return base.toString();
  }

  /** Fails with {@link GatewayUnreachable} when nothing answers at the URL. */
  void checkAlive() {
    getJson("/healthz");
  }

  JsonNode getJson(String path) {
    return send(request(path).GET().build()).json();
  }

  String getText(String path) {
    return send(request(path).GET().build()).body();
  }

  JsonNode postJson(String path, Object body) {
    try {
      return send(request(path)
          .header("Content-Type", "application/json")
          .POST(BodyPublishers.ofString(JSON.writeValueAsString(body)))
          .build()).json();
    } catch (IOException e) {
      throw new CliFailure("cannot encode the request: " + e.getMessage());
    }
  }

  /**
   * POSTs JSON and reads the answer as server-sent events, handing each (name, JSON data) to
   * {@code events} as it arrives. An error status is thrown as for any other call.
   */
  void postEventStream(String path, Object body, java.util.function.BiConsumer<String, JsonNode> events) {
    HttpRequest request;
    try {
      request = request(path)
          .header("Content-Type", "application/json")
          .header("Accept", "text/event-stream")
          .POST(BodyPublishers.ofString(JSON.writeValueAsString(body)))
          .build();
    } catch (IOException e) {
      throw new CliFailure("cannot encode the request: " + e.getMessage());
    }
    eventStream(request, events);
  }

  /** Sends the request and hands each server-sent event (name, JSON data) to {@code events}. */
  private void eventStream(HttpRequest request, java.util.function.BiConsumer<String, JsonNode> events) {
    try {
      var response = http.send(request, BodyHandlers.ofLines());
      // Closed on every path, also when a handler throws before the stream's end.
      try (java.util.stream.Stream<String> lines = response.body()) {
        if (response.statusCode() >= 400) {
          throw GatewayError.from(new Reply(response.statusCode(), String.join("\n", (Iterable<String>) lines::iterator)));
        }
        String event = "message";
        for (String line : (Iterable<String>) lines::iterator) {
          if (line.startsWith("event:")) {
            event = line.substring(6).trim();
          } else if (line.startsWith("data:")) {
            events.accept(event, JSON.readTree(line.substring(5).trim()));
          } else if (line.isEmpty()) {
            event = "message";
          }
        }
      }
    } catch (IOException | InterruptedException e) {
      throw notAnswered(request, e);
    }
  }

  /** What a request that got no reply (or was interrupted waiting for one) means to the user. */
  private RuntimeException notAnswered(HttpRequest request, Exception e) {
    if (e instanceof InterruptedException) {
      Thread.currentThread().interrupt();
      return new CliFailure("interrupted");
    }
    if (isConnectFailure(e)) {
      return new GatewayUnreachable(url());
    }
    return new CliFailure("request to " + request.uri() + " failed: " + describe(e));
  }

  Reply delete(String path) {
    return send(request(path).DELETE().build());
  }

  /**
   * Uploads one file as multipart field {@code file}, streamed from disk, with its uri, and returns
   * the stored document (the body of {@code POST /v1/documents}). The gateway's progress events
   * ({@code converted}, {@code embedded}) go to {@code progress} as they come; an {@code error}
   * event is thrown as a {@link GatewayError}, as an error status is.
   */
  JsonNode upload(Path file, String uri, java.util.function.BiConsumer<String, JsonNode> progress)
      throws IOException {
    JsonNode[] result = new JsonNode[1];
    eventStream(multipart(file, uri).header("Accept", "text/event-stream").build(), (event, data) -> {
      switch (event) {
        case "result" -> result[0] = data;
        case "error" -> throw GatewayError.from(data.path("error"), 0);
        default -> progress.accept(event, data);
      }
    });
    if (result[0] == null) {
      throw new CliFailure("the gateway's answer to the upload of " + file + " ended before its result");
    }
    return result[0];
  }

  private HttpRequest.Builder multipart(Path file, String uri) throws IOException {
    String boundary = "quarry-" + UUID.randomUUID();
    String fileName = file.getFileName().toString();
    String head = "--" + boundary + "\r\n"
        + "Content-Disposition: form-data; name=\"uri\"\r\n\r\n" + uri + "\r\n"
        + "--" + boundary + "\r\n"
        + "Content-Disposition: form-data; name=\"file\"; filename=\"" + quoted(fileName) + "\"\r\n"
        + "Content-Type: application/octet-stream\r\n\r\n";
    String tail = "\r\n--" + boundary + "--\r\n";
    BodyPublisher body = BodyPublishers.concat(
        BodyPublishers.ofString(head, StandardCharsets.UTF_8),
        BodyPublishers.ofFile(file),
        BodyPublishers.ofString(tail, StandardCharsets.UTF_8));
    return request("/v1/documents")
        .header("Content-Type", "multipart/form-data; boundary=" + boundary)
        .POST(body);
  }

  static String encode(String segment) {
    return URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20");
  }

  private static String quoted(String name) {
    return name.replace("\\", "\\\\").replace("\"", "\\\"").replace("\r", "").replace("\n", "");
  }

  private HttpRequest.Builder request(String path) {
    HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofMinutes(10));
    return bearer == null ? builder : builder.header("Authorization", "Bearer " + bearer);
  }

  private Reply send(HttpRequest request) {
    try {
      var response = http.send(request, BodyHandlers.ofString(StandardCharsets.UTF_8));
      Reply reply = new Reply(response.statusCode(), response.body());
      if (reply.status() >= 400) {
        throw GatewayError.from(reply);
      }
      return reply;
    } catch (IOException | InterruptedException e) {
      throw notAnswered(request, e);
    }
  }

  private static boolean isConnectFailure(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof ConnectException || t instanceof HttpConnectTimeoutException) {
        return true;
      }
    }
    return false;
  }

  private static String describe(Throwable e) {
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
  }

  /** A response the gateway sent. */
  record Reply(int status, String body) {
    JsonNode json() {
      try {
        return JSON.readTree(body);
      } catch (IOException e) {
        throw new CliFailure("the gateway answered " + status + " with something that is not JSON");
      }
    }
  }

  /** An error the gateway answered with: {"error": {"code", "message"}}. */
  static final class GatewayError extends RuntimeException {
    private final int status;
    private final String code;

    GatewayError(int status, String code, String message) {
      super(message, null, false, false);
      this.status = status;
      this.code = code;
    }

    static GatewayError from(Reply reply) {
      try {
        JsonNode error = JSON.readTree(reply.body()).path("error");
        if (error.isObject()) {
          return from(error, reply.status());
        }
      } catch (IOException notJson) {
        // fall through: report the status alone
      }
      return new GatewayError(reply.status(), "http_" + reply.status(), "the gateway answered " + reply.status());
    }

    /** From an error body's {@code error} object; status 0 when it came in an event stream. */
    static GatewayError from(JsonNode error, int status) {
      return new GatewayError(status, error.path("code").asText("http_" + status), error.path("message").asText(""));
    }

    int status() {
      return status;
    }

    String code() {
      return code;
    }
  }

  /** Nothing listens at the URL. */
  static final class GatewayUnreachable extends RuntimeException {
    GatewayUnreachable(String url) {
      super("the Quarry gateway isn't running at " + url
          + "; start it with ./quarry serve (or point --url / QUARRY_URL at a running one)", null, false, false);
    }
  }
}
