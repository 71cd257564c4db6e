package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.ingest.HostileFixtures;
import dev.quarry.support.SharedData;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.multipart.MultipartForm;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Issue 33, through a real gateway: the red team's four files (a 49 KB HTML table of {@code
 * colspan=1000 rowspan=65535} cells, a docling grid of one wide row and 60,000 empty ones, a GFM
 * table with a 60,000-column header, a DOCX row with {@code w:gridBefore} of 1,500,000,000) are
 * uploaded at once by one tenant while another tenant searches. On main they took the heap, held
 * every tenant's search for 44-85 s and left DOCX answering 500 until a restart.
 */
@DisplayName("The red team's four files are refused with 413s naming the limit while another tenant's search answers")
class HostileUploadsApiTest {
  @AutoClose
  private final TestGateway gateway = TestGateway.started();

  private Future<HttpResponse<Buffer>> upload(WebClient client, String name, byte[] bytes) {
    MultipartForm form = MultipartForm.create()
        .attribute("uri", "hostile/" + name)
        .binaryFileUpload("file", name, Buffer.buffer(bytes), "application/octet-stream");
    return client.post("/v1/documents").sendMultipartForm(form);
  }

  @Test
  @DisplayName("each is 413 too_large naming the table limit; the quiet tenant's searches answer meanwhile; DOCX still converts after")
  void attackersFiles() throws Exception {
    TestGateway.NewTenant quiet = gateway.createTenant("quiet");
    WebClient quietClient = gateway.clientFor(quiet.apiKey());
    HttpResponse<Buffer> stored = quietClient.post("/v1/documents").sendJsonObject(new JsonObject()
        .put("uri", "ferry.md").put("content_type", "text/markdown")
        .put("content", "# Ferry\n\n## Timetable\n\nThe first ferry leaves the harbour at 06:10.\n")).await();
    assertThat(stored.statusCode()).as(stored.bodyAsString()).isEqualTo(201);

    List<String> names = List.of("spans.html", "grid.json", "header.md", "gridbefore.docx");
    List<Future<HttpResponse<Buffer>>> uploads = new ArrayList<>();
    for (String name : names) {
      uploads.add(upload(gateway.client(), name, HostileFixtures.all().get(name).bytes()));
    }
    int searches = 0;
    long slowestMs = 0;
    do {
      long t0 = System.nanoTime();
      HttpResponse<Buffer> found = quietClient.post("/v1/search")
          .sendJsonObject(new JsonObject().put("query", "first ferry harbour")).await();
      slowestMs = Math.max(slowestMs, (System.nanoTime() - t0) / 1_000_000);
      assertThat(found.statusCode()).as(found.bodyAsString()).isEqualTo(200);
      assertThat(found.bodyAsJsonObject().getJsonArray("results")).isNotEmpty();
      searches++;
    } while (uploads.stream().anyMatch(u -> !u.isComplete()));
    System.out.printf("the quiet tenant searched %d times while the four uploads ran; slowest %d ms%n",
        searches, slowestMs);

    for (int i = 0; i < names.size(); i++) {
      HttpResponse<Buffer> r = uploads.get(i).await();
      assertThat(r.statusCode()).as(names.get(i) + ": " + r.bodyAsString()).isEqualTo(413);
      JsonObject error = r.bodyAsJsonObject().getJsonObject("error");
      assertThat(error.getString("code")).isEqualTo("too_large");
      assertThat(error.getString("message")).startsWith(names.get(i) + ": has a table of")
          .contains("the limit for one table is");
    }

    HttpResponse<Buffer> ready = gateway.bareClient().get("/readyz").send().await();
    assertThat(ready.statusCode()).as(ready.bodyAsString()).isEqualTo(200);
    JsonObject body = ready.bodyAsJsonObject();
    assertThat(body.getJsonObject("checks").getJsonObject("converters").getBoolean("ok")).isTrue();
    assertThat(body.getJsonObject("ingest_memory").getLong("reserved_mb")).as("every share released").isZero();

    // What broke every DOCX on main: one converts now, from a tenant of its own.
    byte[] docx = Files.readAllBytes(SharedData.path("docling/docx/word_sample.docx"));
    HttpResponse<Buffer> after = upload(quietClient, "word_sample.docx", docx).await();
    assertThat(after.statusCode()).as(after.bodyAsString()).isEqualTo(201);
  }
}
