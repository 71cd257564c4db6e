package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("GET /v1/documents in pages")
class DocumentsPagingTest {
  @AutoClose
  private final TestGateway gateway = TestGateway.started();

  /** A tenant of its own, so other tests' documents never show in its listing. */
  private WebClient tenant(String name) {
    return gateway.clientFor(gateway.createTenant(name).apiKey());
  }

  private static String ingest(WebClient client, String title) {
    JsonObject body = new JsonObject().put("title", title).put("uri", "paging://" + title)
        .put("content", "# " + title + "\n\nNotes about " + title + ".\n").put("content_type", "text/markdown");
    HttpResponse<Buffer> response = client.post("/v1/documents").sendJsonObject(body).await();
    assertThat(response.statusCode()).as(response.bodyAsString()).isEqualTo(201);
    return response.bodyAsJsonObject().getString("id");
  }

  private static JsonObject list(WebClient client, String query) {
    HttpResponse<Buffer> response = client.get("/v1/documents" + query).send().await();
    assertThat(response.statusCode()).as(response.bodyAsString()).isEqualTo(200);
    return response.bodyAsJsonObject();
  }

  private static List<String> ids(JsonObject page) {
    List<String> out = new ArrayList<>();
    page.getJsonArray("documents").forEach(d -> out.add(((JsonObject) d).getString("id")));
    return out;
  }

  private static String after(String cursor) {
    return "&cursor=" + URLEncoder.encode(cursor, StandardCharsets.UTF_8);
  }

  @Test
  @DisplayName("pages of two walk the whole listing once, in its order, and the last says there is no next")
  void walksTheListing() {
    WebClient client = tenant("paging-walk");
    List<String> added = new ArrayList<>();
    for (String title : List.of("Alder", "Birch", "Cedar", "Damson", "Elm")) {
      added.add(ingest(client, title));
    }
    JsonObject all = list(client, "");
    assertThat(ids(all)).containsExactlyElementsOf(added);
    assertThat(all.containsKey("next_cursor")).isTrue();
    assertThat(all.getString("next_cursor")).isNull();

    List<String> walked = new ArrayList<>();
    List<Integer> sizes = new ArrayList<>();
    JsonObject page = list(client, "?limit=2");
    while (true) {
      walked.addAll(ids(page));
      sizes.add(ids(page).size());
      String next = page.getString("next_cursor");
      if (next == null) {
        break;
      }
      page = list(client, "?limit=2" + after(next));
    }
    assertThat(walked).containsExactlyElementsOf(added);
    assertThat(sizes).containsExactly(2, 2, 1);
    // A page that ends exactly at the last document says so.
    assertThat(list(client, "?limit=5").getString("next_cursor")).isNull();
    assertThat(list(client, "?limit=4").getString("next_cursor")).isNotNull();
  }

  @Test
  @DisplayName("a cursor survives the deletion of the document it points after, and later documents follow")
  void cursorSurvivesChanges() {
    WebClient client = tenant("paging-changes");
    String first = ingest(client, "Fir");
    String second = ingest(client, "Gorse");
    String third = ingest(client, "Hazel");
    JsonObject page = list(client, "?limit=2");
    assertThat(ids(page)).containsExactly(first, second);
    String cursor = page.getString("next_cursor");

    assertThat(client.delete("/v1/documents/" + second).send().await().statusCode()).isEqualTo(204);
    String fourth = ingest(client, "Ivy");
    assertThat(ids(list(client, "?limit=2" + after(cursor)))).containsExactly(third, fourth);
    // Without a limit, a cursor gives the rest of the listing.
    assertThat(ids(list(client, "?" + after(cursor).substring(1)))).containsExactly(third, fourth);

    // Another tenant's cursor only positions the caller's own listing.
    WebClient other = tenant("paging-other");
    String theirs = ingest(other, "Juniper");
    assertThat(ids(list(other, "?limit=10" + after(cursor)))).containsExactly(theirs);
  }

  @Test
  @DisplayName("a bad limit or cursor is a 400 that names the parameter")
  void badParameters() {
    WebClient client = tenant("paging-bad");
    ingest(client, "Kale");
    String foreign = Base64.getUrlEncoder().encodeToString("x1:1:2:3".getBytes(StandardCharsets.UTF_8));
    record Case(String query, String code, String says) {}
    for (Case c : List.of(
        new Case("?limit=0", "invalid_limit", "between 1 and 1000"),
        new Case("?limit=1001", "invalid_limit", "between 1 and 1000"),
        new Case("?limit=ten", "invalid_limit", "must be an integer, got 'ten'"),
        new Case("?limit=2&cursor=not-a-cursor!", "invalid_cursor", "'cursor'"),
        new Case("?cursor=" + foreign, "invalid_cursor", "'cursor'"),
        new Case("?cursor=" + Base64.getUrlEncoder().encodeToString(
            "d1:1:2:not-a-uuid".getBytes(StandardCharsets.UTF_8)), "invalid_cursor", "'cursor'"))) {
      HttpResponse<Buffer> response = client.get("/v1/documents" + c.query()).send().await();
      assertThat(response.statusCode()).as(c.query()).isEqualTo(400);
      JsonObject error = response.bodyAsJsonObject().getJsonObject("error");
      assertThat(error.getString("code")).as(c.query()).isEqualTo(c.code());
      assertThat(error.getString("message")).as(c.query()).contains(c.says());
    }
  }
}
