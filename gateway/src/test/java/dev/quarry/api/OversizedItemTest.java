package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.ingest.ItemBounds;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A source whose converter yields one enormous item (a log without blank lines) is stored as items
 * within {@link ItemBounds#MAX_ITEM_CHARS}, so its tenant's searches and its document view keep
 * working and a hit in it carries a bounded context. The red team stored a 180-million-character
 * item this way; past 20 million characters every search of the tenant failed with a 500.
 */
@DisplayName("The HTTP API, on a document with one huge paragraph")
class OversizedItemTest {
  @AutoClose
  private final TestGateway gateway = TestGateway.started();

  @Test
  @DisplayName("a converter's enormous title is kept cut to the title bound, at a word")
  void boundedTitle() {
    String heading = "Harbour timetable revision ".repeat(400).strip();
    HttpResponse<Buffer> created = gateway.client().post("/v1/documents").sendJsonObject(new JsonObject()
        .put("uri", "timetable.md").put("content_type", "text/markdown")
        .put("content", "# " + heading + "\n\nThe ferry leaves at nine.\n")).await();
    assertThat(created.statusCode()).as(created.bodyAsString()).isEqualTo(201);
    String title = created.bodyAsJsonObject().getString("title");
    assertThat(title.length()).isLessThanOrEqualTo(dev.quarry.ingest.IngestService.MAX_TITLE_CHARS);
    assertThat(title).startsWith("Harbour timetable revision").endsWith("revision…");
  }

  @Test
  @DisplayName("its items are within the bound and read back whole; searching it answers with a bounded context")
  void boundedItems() {
    StringBuilder text = new StringBuilder();
    for (int i = 0; text.length() < TestGateway.UPLOAD_LIMIT - 30_000; i++) {
      text.append(i == 1500 ? "checkpoint zanzibarquartz reached by worker " : "line " + i + " of the nightly batch ")
          .append(i % 13).append(" wrote rows to the ledger\n");
    }
    String source = text.toString().strip();
    assertThat(source.length()).isGreaterThan(ItemBounds.MAX_ITEM_CHARS * 2);
    HttpResponse<Buffer> created = gateway.client().post("/v1/documents").sendJsonObject(new JsonObject()
        .put("uri", "batch.log").put("content_type", "text/plain").put("content", source)).await();
    assertThat(created.statusCode()).as(created.bodyAsString()).isEqualTo(201);
    String id = created.bodyAsJsonObject().getString("id");

    HttpResponse<Buffer> items = gateway.client().get("/v1/documents/" + id + "/items").send().await();
    assertThat(items.statusCode()).as(items.bodyAsString()).isEqualTo(200);
    List<JsonObject> lines = items.bodyAsString().lines().map(JsonObject::new).toList();
    assertThat(lines).hasSizeGreaterThanOrEqualTo(3).allSatisfy(line ->
        assertThat(line.getString("text").length()).isLessThanOrEqualTo(ItemBounds.MAX_ITEM_CHARS));
    assertThat(lines).extracting(l -> l.getString("self_ref")).containsOnly(lines.get(0).getString("self_ref"));
    assertThat(lines).extracting(l -> l.getInteger("position")).containsExactly(
        java.util.stream.IntStream.range(0, lines.size()).boxed().toArray(Integer[]::new));
    assertThat(String.join("\n", lines.stream().map(l -> l.getString("text")).toList())).isEqualTo(source);

    HttpResponse<Buffer> found = gateway.client().post("/v1/search")
        .sendJsonObject(new JsonObject().put("query", "zanzibarquartz checkpoint").put("limit", 3)).await();
    assertThat(found.statusCode()).as(found.bodyAsString()).isEqualTo(200);
    JsonArray results = found.bodyAsJsonObject().getJsonArray("results");
    assertThat(results).isNotEmpty();
    String content = results.getJsonObject(0).getString("content");
    assertThat(content).contains("zanzibarquartz");
    assertThat(content.length()).isLessThanOrEqualTo(ItemBounds.MAX_ITEM_CHARS);
  }
}
