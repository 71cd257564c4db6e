package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** GET /v1/documents/{id}/chunks/{chunk}: what a citation's chunk id points at, the items included. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("A document's chunk by id: its range of items, for the tenant that owns it only")
class DocumentChunkTest {
  @AutoClose
  private final TestGateway gateway = TestGateway.started();
  private final TestGateway.NewTenant other = gateway.createTenant("other");

  private JsonObject ingest(WebClient client, String uri, String content) {
    HttpResponse<Buffer> r = client.post("/v1/documents").sendJsonObject(new JsonObject().put("uri", uri)
        .put("content_type", "text/markdown").put("content", content)).await();
    assertThat(r.statusCode()).as(r.bodyAsString()).isEqualTo(201);
    return r.bodyAsJsonObject();
  }

  @Test
  @DisplayName("a hit's chunk answers with the items it came from, as items.jsonl numbers them, and the hit's refs")
  void chunkOfAHit() {
    String id = ingest(gateway.client(), "notes.md",
        "# Notes\n\n## Tides\n\nHigh water at the quay is at noon.\n\n## Fares\n\nA return ticket costs nine pounds.\n")
        .getString("id");
    JsonObject hit = gateway.client().post("/v1/search")
        .sendJsonObject(new JsonObject().put("query", "return ticket fare").put("limit", 1)).await()
        .bodyAsJsonObject().getJsonArray("results").getJsonObject(0);
    HttpResponse<Buffer> r = gateway.client()
        .get("/v1/documents/" + id + "/chunks/" + hit.getString("chunk_id")).send().await();
    assertThat(r.statusCode()).as(r.bodyAsString()).isEqualTo(200);
    JsonObject chunk = r.bodyAsJsonObject();
    assertThat(chunk.getString("document_id")).isEqualTo(id);
    assertThat(chunk.getJsonArray("headings").getList()).isEqualTo(hit.getJsonArray("headings").getList());
    JsonArray range = chunk.getJsonArray("item_range");
    List<JsonObject> items = gateway.client().get("/v1/documents/" + id + "/items").send().await().bodyAsString()
        .lines().map(JsonObject::new).toList();
    List<String> refs = items.stream()
        .filter(i -> i.getInteger("position") >= range.getInteger(0) && i.getInteger("position") < range.getInteger(1))
        .map(i -> i.getString("self_ref")).toList();
    assertThat(refs).isNotEmpty().isEqualTo(chunk.getJsonArray("doc_item_refs").getList());
    assertThat(chunk.getString("content")).contains("nine pounds");
  }

  @Test
  @DisplayName("another tenant's chunk, a chunk of another document and a made-up one are the same 404; a bad id 400")
  void refusals() {
    String id = ingest(gateway.client(), "a.md", "# A\n\nAlpha text about ferries.\n").getString("id");
    String otherDoc = ingest(gateway.client(), "b.md", "# B\n\nBeta text about harbours.\n").getString("id");
    String chunk = gateway.client().post("/v1/search").sendJsonObject(new JsonObject().put("query", "alpha ferries")
        .put("document_ids", new JsonArray().add(id))).await().bodyAsJsonObject()
        .getJsonArray("results").getJsonObject(0).getString("chunk_id");
    WebClient b = gateway.clientFor(other.apiKey());
    String made = UUID.randomUUID().toString();
    HttpResponse<Buffer> forB = b.get("/v1/documents/" + id + "/chunks/" + chunk).send().await();
    HttpResponse<Buffer> missing = b.get("/v1/documents/" + id + "/chunks/" + made).send().await();
    assertThat(forB.statusCode()).isEqualTo(404);
    assertThat(forB.bodyAsString()).isEqualTo(missing.bodyAsString().replace(made, chunk));
    HttpResponse<Buffer> elsewhere = gateway.client().get("/v1/documents/" + otherDoc + "/chunks/" + chunk).send().await();
    assertThat(elsewhere.statusCode()).isEqualTo(404);
    HttpResponse<Buffer> bad = gateway.client().get("/v1/documents/" + id + "/chunks/not-a-uuid").send().await();
    assertThat(bad.statusCode()).isEqualTo(400);
    assertThat(bad.bodyAsJsonObject().getJsonObject("error").getString("message")).contains("chunk id 'not-a-uuid'");
  }
}
