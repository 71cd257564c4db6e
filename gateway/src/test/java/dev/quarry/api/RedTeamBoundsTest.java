package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.ingest.ItemBounds;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.util.Random;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Red team, round 2 (its scripts and README are on branch redteam2). Ways past commit 94100cb's
 * bounds, each of which failed on it:
 * <ul>
 *   <li>F1: every item is within {@link ItemBounds#MAX_ITEM_CHARS}, but a chunk's content starts with
 *       its whole heading path (Chunker), so nested headings of tens of thousands of characters each
 *       give chunks, {@code /chunks/{id}} answers and search hits' {@code headings} far over it.
 *   <li>F2: a {@code uri} longer than PostgreSQL's btree row limit (2704 bytes, incompressible) fails
 *       the {@code UNIQUE (tenant_id, uri)} index: 500 instead of a 4xx naming the field.
 *   <li>F7: the chunker cut a paragraph without spaces between the halves of a surrogate pair, and a
 *       lone surrogate in a JSON body was stored as '?' (F7b), uncounted.
 *   <li>F11: page headers between two paragraphs of one chunk were all part of its hit's context.
 * </ul>
 */
@DisplayName("Red team: what comes back stays within the item bound; a long uri is the client's error")
class RedTeamBoundsTest {
  @AutoClose
  private final TestGateway gateway = TestGateway.started();

  private static String words(Random random, String tag, int chars) {
    String[] w = {"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"};
    StringBuilder sb = new StringBuilder(tag);
    while (sb.length() < chars) {
      sb.append(' ').append(w[random.nextInt(w.length)]).append(random.nextInt(100));
    }
    return sb.substring(0, chars);
  }

  @Test
  @DisplayName("F1: nested long headings do not make a chunk or a hit longer than the item bound")
  void headingPathIsBounded() {
    Random random = new Random(1);
    StringBuilder md = new StringBuilder();
    for (int level = 2; level <= 5; level++) {
      md.append("#".repeat(level)).append(' ').append(words(random, "level" + level, 40_000)).append("\n\n");
    }
    md.append("The quarterly zanzibarquartz timetable lists every crossing.\n");
    HttpResponse<Buffer> created = gateway.client().post("/v1/documents").sendJsonObject(new JsonObject()
        .put("uri", "nested.md").put("content_type", "text/markdown").put("content", md.toString())).await();
    assertThat(created.statusCode()).as(created.bodyAsString()).isEqualTo(201);
    String id = created.bodyAsJsonObject().getString("id");

    HttpResponse<Buffer> found = gateway.client().post("/v1/search")
        .sendJsonObject(new JsonObject().put("query", "zanzibarquartz timetable").put("limit", 3)).await();
    assertThat(found.statusCode()).as(found.bodyAsString()).isEqualTo(200);
    JsonArray results = found.bodyAsJsonObject().getJsonArray("results");
    assertThat(results).isNotEmpty();
    JsonObject hit = results.getJsonObject(0);
    int headingChars = hit.getJsonArray("headings").stream().mapToInt(h -> ((String) h).length()).sum();

    HttpResponse<Buffer> chunk = gateway.client()
        .get("/v1/documents/" + id + "/chunks/" + hit.getString("chunk_id")).send().await();
    assertThat(chunk.statusCode()).as(chunk.bodyAsString()).isEqualTo(200);
    int chunkChars = chunk.bodyAsJsonObject().getString("content").length();

    assertThat(chunkChars).as("/chunks/{id} content").isLessThanOrEqualTo(ItemBounds.MAX_ITEM_CHARS);
    assertThat(headingChars).as("a hit's headings").isLessThanOrEqualTo(ItemBounds.MAX_ITEM_CHARS);
  }

  @Test
  @DisplayName("F2: a uri too long for the uri index is a 4xx, not a 500")
  void longUriIsRefused() {
    Random random = new Random(7);
    StringBuilder uri = new StringBuilder("docs/");
    String alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    for (int i = 0; i < 3_000; i++) {
      uri.append(alphabet.charAt(random.nextInt(alphabet.length())));
    }
    HttpResponse<Buffer> created = gateway.client().post("/v1/documents").sendJsonObject(new JsonObject()
        .put("uri", uri.append(".txt").toString()).put("content", "hello long uri world")).await();
    assertThat(created.statusCode()).as(created.bodyAsString()).isBetween(400, 499);
  }

  @Test
  @DisplayName("F11: page headers between two paragraphs of one chunk do not make a hit longer than the bound")
  void furnitureInsideAChunkIsBounded() {
    Random random = new Random(9);
    JsonArray texts = new JsonArray().add(new JsonObject().put("self_ref", "#/texts/0").put("label", "text")
        .put("text", "The obsidian lighthouse opens at dawn."));
    for (int i = 1; i <= 2; i++) {
      texts.add(new JsonObject().put("self_ref", "#/texts/" + i).put("label", "page_header")
          .put("text", words(random, "header" + i, 99_000)));
    }
    texts.add(new JsonObject().put("self_ref", "#/texts/3").put("label", "text")
        .put("text", "The obsidian lighthouse closes at dusk."));
    JsonArray children = new JsonArray();
    for (int i = 0; i < texts.size(); i++) {
      children.add(new JsonObject().put("$ref", "#/texts/" + i));
    }
    JsonObject doc = new JsonObject().put("schema_name", "DoclingDocument").put("version", "1.0.0")
        .put("name", "furniture").put("body", new JsonObject().put("self_ref", "#/body").put("children", children))
        .put("texts", texts).put("tables", new JsonArray()).put("groups", new JsonArray()).put("pictures", new JsonArray());
    HttpResponse<Buffer> created = gateway.client().post("/v1/documents").sendJsonObject(new JsonObject()
        .put("uri", "furniture.json").put("content", doc.encode())).await();
    assertThat(created.statusCode()).as(created.bodyAsString()).isEqualTo(201);

    HttpResponse<Buffer> found = gateway.client().post("/v1/search")
        .sendJsonObject(new JsonObject().put("query", "obsidian lighthouse dawn dusk").put("limit", 1)).await();
    assertThat(found.statusCode()).as(found.bodyAsString()).isEqualTo(200);
    JsonArray results = found.bodyAsJsonObject().getJsonArray("results");
    assertThat(results).isNotEmpty();
    assertThat(results.getJsonObject(0).getString("content").length()).as("one hit's content")
        .isLessThanOrEqualTo(ItemBounds.MAX_ITEM_CHARS);
  }

  @Test
  @DisplayName("F7: a paragraph of emoji without spaces is chunked without splitting a pair; F7b: a lone surrogate in JSON is dropped and counted")
  void surrogates() {
    String emoji = "\uD83D\uDE00".repeat(2_000);
    HttpResponse<Buffer> created = gateway.client().post("/v1/documents").sendJsonObject(new JsonObject()
        .put("uri", "faces.txt").put("content_type", "text/plain").put("content", "Faces\n\n" + emoji)).await();
    assertThat(created.statusCode()).as(created.bodyAsString()).isEqualTo(201);
    String id = created.bodyAsJsonObject().getString("id");
    java.util.List<String> ids = gateway.client().post("/v1/search")
        .sendJsonObject(new JsonObject().put("query", "faces").put("limit", 20)).await()
        .bodyAsJsonObject().getJsonArray("results").stream().map(r -> ((JsonObject) r).getString("chunk_id")).toList();
    assertThat(ids).isNotEmpty();
    for (String chunkId : ids) {
      String content = gateway.client().get("/v1/documents/" + id + "/chunks/" + chunkId).send().await()
          .bodyAsJsonObject().getString("content");
      assertThat(content).doesNotContain("?");
    }
    HttpResponse<Buffer> lone = gateway.client().post("/v1/documents").putHeader("Content-Type", "application/json")
        .sendBuffer(Buffer.buffer("{\"uri\": \"lone.txt\", \"content_type\": \"text/plain\", "
            + "\"content\": \"Broken \\ud800 surrogate here\"}")).await();
    assertThat(lone.statusCode()).as(lone.bodyAsString()).isEqualTo(201);
    assertThat(lone.bodyAsJsonObject().getInteger("undecodable_chars")).isEqualTo(1);
    String items = gateway.client().get("/v1/documents/" + lone.bodyAsJsonObject().getString("id") + "/items")
        .send().await().bodyAsString();
    assertThat(items).contains("Broken surrogate here").doesNotContain("?");
  }
}
