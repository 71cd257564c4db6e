package dev.quarry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.io.IOException;

/**
 * An OpenAI-compatible chat completions endpoint that answers with a {@link DemoRecording}'s turns:
 * the model the demo points its gateway at when no real one is configured, so that everything after
 * the model (sandboxes, callbacks, search, citations, replays, the console) runs for real. It
 * listens on the loopback interface only and serves {@code POST …/chat/completions}; anything else
 * is a 404 in OpenAI's error shape.
 */
final class RecordedModelServer implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();
  /**
   * The largest request read: an analysis' whole conversation (each tool result capped by the
   * gateway's output limit) fits many times over, and nothing larger is held in memory.
   */
  static final long MAX_REQUEST_BYTES = 32L << 20;

  private final Vertx vertx;
  private final HttpServer server;

  private RecordedModelServer(Vertx vertx, HttpServer server) {
    this.vertx = vertx;
    this.server = server;
  }

  /** Listens on 127.0.0.1 at {@code port} (0: any free port). */
  static RecordedModelServer start(DemoRecording recording, int port) {
    Vertx vertx = Vertx.vertx();
    try {
      Router router = Router.router(vertx);
      router.post().handler(BodyHandler.create(false).setBodyLimit(MAX_REQUEST_BYTES));
      router.postWithRegex(".*/chat/completions").handler(ctx -> complete(recording, ctx));
      router.route().handler(ctx -> send(ctx, 404, error("not_found",
          "the recorded demo model serves only POST /v1/chat/completions, not " + ctx.request().method() + " "
              + ctx.request().path())));
      HttpServer server = vertx.createHttpServer().requestHandler(router).listen(port, "127.0.0.1").await();
      return new RecordedModelServer(vertx, server);
    } catch (RuntimeException e) {
      vertx.close();
      throw e;
    }
  }

  /** The base URL to give the gateway, as OPENAI_BASE_URL takes it. */
  String baseUrl() {
    return "http://127.0.0.1:" + server.actualPort() + "/v1";
  }

  private static void complete(DemoRecording recording, RoutingContext ctx) {
    JsonNode request;
    try {
      request = JSON.readTree(ctx.body().asString());
    } catch (IOException | RuntimeException e) {
      send(ctx, 400, error("invalid_request_error", "the request body is not JSON"));
      return;
    }
    if (request == null || !request.isObject()) {
      send(ctx, 400, error("invalid_request_error", "the request body is not a JSON object"));
      return;
    }
    DemoRecording.Reply reply = recording.reply(request);
    send(ctx, reply.status(), reply.body());
  }

  private static ObjectNode error(String code, String message) {
    ObjectNode body = JSON.createObjectNode();
    body.putObject("error").put("message", message).put("type", code).putNull("param").put("code", code);
    return body;
  }

  private static void send(RoutingContext ctx, int status, ObjectNode body) {
    ctx.response().setStatusCode(status).putHeader("content-type", "application/json").end(body.toString());
  }

  @Override
  public void close() {
    try {
      server.close().await();
    } finally {
      vertx.close().await();
    }
  }
}
