package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("POST /v1/documents with progress as server-sent events")
class IngestStreamingTest {
  @AutoClose
  private final TestGateway gateway = TestGateway.started();

  record Event(long id, String type, JsonObject data) {}

  /** Parses a whole text/event-stream body; every event must have an id, a type and JSON data. */
  /**
   * The events of a stream, as a client reads them: comment lines (the heartbeat's {@code :
   * keep-alive}, which a slow ingest gets between its events) are no event.
   */
  static List<Event> events(String body) {
    List<Event> out = new ArrayList<>();
    for (String block : body.split("\n\n")) {
      if (block.lines().allMatch(line -> line.isBlank() || line.startsWith(":"))) {
        continue;
      }
      Long id = null;
      String type = null;
      JsonObject data = null;
      for (String line : block.split("\n")) {
        if (line.startsWith("id: ")) {
          id = Long.parseLong(line.substring(4));
        } else if (line.startsWith("event: ")) {
          type = line.substring(7);
        } else if (line.startsWith("data: ")) {
          data = new JsonObject(line.substring(6));
        }
      }
      assertThat(id).as(block).isNotNull();
      assertThat(type).as(block).isNotNull();
      assertThat(data).as(block).isNotNull();
      out.add(new Event(id, type, data));
    }
    return out;
  }

  /** A report long enough for several of the model's batches (32 chunks each). */
  static String longReport(String topic, int sections) {
    StringBuilder md = new StringBuilder("# " + topic + "\n\n");
    IntStream.range(0, sections).forEach(i -> md.append("## Part ").append(i + 1).append("\n\n")
        .append(("Findings of part " + (i + 1) + " about " + topic + ": the survey crew measured the "
            + "tide, the wind and the silt at every buoy, and wrote down what moved. ").repeat(14))
        .append("\n\n"));
    return md.toString();
  }

  static JsonObject json(String title, String content) {
    return new JsonObject().put("title", title).put("uri", "stream://" + title).put("content", content)
        .put("content_type", "text/markdown");
  }

  HttpResponse<Buffer> post(WebClient client, String query, JsonObject body, boolean acceptStream) {
    var request = client.post("/v1/documents" + query);
    if (acceptStream) {
      request.putHeader("Accept", "text/event-stream");
    }
    return request.sendJsonObject(body).await();
  }

  @Test
  @DisplayName("a long document reports its conversion, each embedded batch, then the stored document")
  void progressThenResult() {
    WebClient client = gateway.clientFor(gateway.createTenant("stream-progress").apiKey());
    HttpResponse<Buffer> response = post(client, "", json("Harbour survey", longReport("the harbour", 70)), true);
    assertThat(response.statusCode()).as(response.bodyAsString()).isEqualTo(200);
    assertThat(response.getHeader("Content-Type")).startsWith("text/event-stream");
    List<Event> events = events(response.bodyAsString());

    assertThat(events).extracting(Event::id)
        .containsExactlyElementsOf(IntStream.rangeClosed(1, events.size()).mapToObj(i -> (long) i).toList());
    assertThat(events.get(0).type()).isEqualTo("converted");
    int chunks = events.get(0).data().getInteger("chunk_count");
    assertThat(chunks).isGreaterThan(64);
    assertThat(events.get(0).data().getString("source_type")).isEqualTo("markdown");
    List<Event> embedded = events.subList(1, events.size() - 1);
    assertThat(embedded).extracting(Event::type).containsOnly("embedded");
    assertThat(embedded).hasSize((chunks + 31) / 32);
    assertThat(embedded).extracting(e -> e.data().getInteger("chunks_embedded"))
        .isSorted().last().isEqualTo(chunks);
    assertThat(embedded).extracting(e -> e.data().getInteger("chunk_count")).containsOnly(chunks);

    Event result = events.get(events.size() - 1);
    assertThat(result.type()).isEqualTo("result");
    assertThat(result.data().getString("status")).isEqualTo("created");
    assertThat(result.data().getInteger("chunk_count")).isEqualTo(chunks);
    String id = result.data().getString("id");
    HttpResponse<Buffer> stored = client.get("/v1/documents/" + id).send().await();
    assertThat(stored.statusCode()).isEqualTo(200);
    assertThat(stored.bodyAsJsonObject().getInteger("chunk_count")).isEqualTo(chunks);

    // The same bytes again: nothing to convert or embed, only the result.
    List<Event> again = events(post(client, "?stream=true", json("Harbour survey",
        longReport("the harbour", 70)), false).bodyAsString());
    assertThat(again).extracting(Event::type).containsExactly("result");
    assertThat(again.get(0).data().getString("status")).isEqualTo("unchanged");
    assertThat(again.get(0).data().getString("id")).isEqualTo(id);
  }

  @Test
  @DisplayName("input the converters reject gets its plain 4xx, not a stream")
  void badInputIsAPlainError() {
    WebClient client = gateway.clientFor(gateway.createTenant("stream-bad").apiKey());
    HttpResponse<Buffer> empty = post(client, "", json("Nothing", ""), true);
    assertThat(empty.statusCode()).isEqualTo(422);
    assertThat(empty.getHeader("Content-Type")).startsWith("application/json");
    assertThat(empty.bodyAsJsonObject().getJsonObject("error").getString("code")).isEqualTo("empty");

    HttpResponse<Buffer> badFlag = post(client, "?stream=yes", json("Flag", "# Flag\n\ntext\n"), false);
    assertThat(badFlag.statusCode()).isEqualTo(400);
    assertThat(badFlag.bodyAsJsonObject().getJsonObject("error").getString("code")).isEqualTo("invalid_stream");
    assertThat(client.get("/v1/documents").send().await().bodyAsJsonObject().getJsonArray("documents")).isEmpty();
  }

  @Test
  @DisplayName("a failure after conversion ends the stream with an error event, and nothing is stored")
  void laterFailureIsAnErrorEvent() {
    TestGateway.NewTenant tenant = gateway.createTenant("stream-quota");
    HttpResponse<Buffer> set = gateway.admin().put("/v1/admin/tenants/" + tenant.id() + "/quotas")
        .sendJsonObject(new JsonObject().put("stored_bytes", 2000)).await();
    assertThat(set.statusCode()).as(set.bodyAsString()).isEqualTo(200);
    WebClient client = gateway.clientFor(tenant.apiKey());

    HttpResponse<Buffer> response = post(client, "", json("Too big", longReport("the shoals", 3)), true);
    assertThat(response.statusCode()).isEqualTo(200);
    List<Event> events = events(response.bodyAsString());
    assertThat(events).extracting(Event::type).startsWith("converted", "embedded").endsWith("error")
        .doesNotContain("result");
    JsonObject error = events.get(events.size() - 1).data().getJsonObject("error");
    assertThat(error.getString("code")).isEqualTo("quota_exceeded");
    assertThat(error.getString("message")).contains("2000");
    assertThat(client.get("/v1/documents").send().await().bodyAsJsonObject().getJsonArray("documents")).isEmpty();
  }
}
