package dev.quarry.api;

import dev.quarry.ingest.IngestProgress;
import io.vertx.core.Context;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonObject;

/**
 * {@code POST /v1/documents} as server-sent events: {@code converted}, {@code embedded} after each
 * batch of chunks, then {@code result} (the body a plain upload answers) or {@code error} (the error
 * body). The stream opens with the first progress, so an input the converters reject, or a quota it
 * breaks, still gets its own 4xx; only what fails after conversion (the model, the database, the
 * tenant's stored-bytes quota) comes as an {@code error} event.
 */
final class IngestEvents implements IngestProgress {
  private final HttpServerResponse response;
  private final Context context;
  private long seq;

  private final java.time.Duration heartbeat;

  IngestEvents(HttpServerResponse response, Context context, java.time.Duration heartbeat) {
    this.heartbeat = heartbeat;
    this.response = response;
    this.context = context;
  }

  @Override
  public void converted(String sourceType, int items, int chunks) {
    context.runOnContext(v -> send("converted", new JsonObject()
        .put("source_type", sourceType).put("item_count", items).put("chunk_count", chunks)));
  }

  @Override
  public void embedded(int done, int total) {
    context.runOnContext(v -> send("embedded", new JsonObject()
        .put("chunks_embedded", done).put("chunk_count", total)));
  }

  /** The last event: the document as stored. On the event loop. */
  void result(JsonObject ingested) {
    last("result", ingested);
  }

  /** The last event, in place of the result, once the stream is open. On the event loop. */
  void error(ApiError error) {
    last("error", WireFormat.error(error));
  }

  private void last(String type, JsonObject data) {
    send(type, data);
    if (!response.ended() && !response.closed()) {
      response.end();
    }
  }

  boolean started() {
    return response.headWritten();
  }

  private void send(String type, JsonObject data) {
    if (response.ended() || response.closed()) {
      return; // the client went away: the ingest itself goes on, as a plain upload's would
    }
    if (!response.headWritten()) {
      EventStream.open(response, context.owner(), heartbeat);
    }
    response.write("id: " + (++seq) + "\nevent: " + type + "\ndata: " + data.encode() + "\n\n");
  }
}
