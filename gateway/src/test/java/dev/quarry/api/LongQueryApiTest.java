package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.multipart.MultipartForm;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Long queries through {@code POST /v1/search}: a pasted paragraph, a model's verbose question, a
 * query at the length limit whose terms all have postings. Each must be answered (200 with hits, the
 * right document first), within a bound far above what it takes (so a pathological plan, a model
 * call per word or a BM25 that reads every posting of hundreds of terms fails it), never a 500.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("The HTTP API, on long queries")
class LongQueryApiTest {
  /** Far above the few hundred milliseconds a long query takes here, even on a busy machine. */
  static final long BOUND_MILLIS = 20_000;

  @AutoClose
  private final TestGateway gateway = TestGateway.started();

  private String ferryId;
  private String glossaryId;

  /** Four hundred distinct made-up words, so that a long query's terms all have postings. */
  static List<String> vocabulary() {
    List<String> words = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      words.add(String.format(Locale.ROOT, "kelvar%03dz", i).replace('0', 'q').replace('1', 'w')
          .replace('2', 'e').replace('3', 'r').replace('4', 't').replace('5', 'y').replace('6', 'u')
          .replace('7', 'i').replace('8', 'o').replace('9', 'p'));
    }
    return words;
  }

  @BeforeAll
  void ingest() {
    ferryId = upload("ferry.md", """
        # Harbour ferry

        The harbour ferry crosses from Port Halvard to the island of Mellick every ninety minutes.
        In winter storms the crossing is cancelled when the swell at the breakwater passes three
        metres, and passengers are moved to the coastal bus, which takes two hours longer.

        ## Tickets

        Return tickets are valid for a month. Bicycles travel free; dogs must be kept on a lead.
        """);
    glossaryId = upload("glossary.md", "# Glossary\n\n" + String.join(" ", vocabulary()) + "\n");
    upload("bakery.md", """
        # Bakery

        Feed the sourdough starter the night before, then bake the loaf until the crust is brown.
        """);
  }

  private String upload(String fileName, String markdown) {
    MultipartForm form = MultipartForm.create()
        .binaryFileUpload("file", fileName, Buffer.buffer(markdown.getBytes(StandardCharsets.UTF_8)),
            "application/octet-stream");
    HttpResponse<Buffer> response = gateway.client().post("/v1/documents").sendMultipartForm(form).await();
    assertThat(response.statusCode()).as(response.bodyAsString()).isEqualTo(201);
    return response.bodyAsJsonObject().getString("id");
  }

  /** The results of a search that must succeed within the bound. */
  private JsonArray search(String query) {
    long start = System.nanoTime();
    HttpResponse<Buffer> response = gateway.client().post("/v1/search")
        .sendJsonObject(new JsonObject().put("query", query).put("limit", 5)).await();
    long millis = (System.nanoTime() - start) / 1_000_000;
    assertThat(response.statusCode()).as(response.bodyAsString()).isEqualTo(200);
    assertThat(millis).as("milliseconds for a %d-character query", query.length()).isLessThan(BOUND_MILLIS);
    JsonArray results = response.bodyAsJsonObject().getJsonArray("results");
    assertThat(results).isNotEmpty();
    return results;
  }

  @Test
  @DisplayName("a pasted paragraph of about 300 words with the question at its end finds its document first")
  void pastedParagraph() {
    String paragraph = "I was reading the timetable for our trip next week and the notes my colleague sent "
        + "me, which go on about many things that have nothing to do with the journey itself: the hotel, "
        + "the dinner on Thursday, the museum that closes early, the rental car and the parking. ";
    StringBuilder query = new StringBuilder();
    while (query.toString().split("\\s+").length < 280) {
      query.append(paragraph);
    }
    query.append("So my question is: when is the harbour ferry crossing to Mellick cancelled in winter storms,"
        + " and what happens to the passengers then?");
    assertThat(query.length()).isLessThanOrEqualTo(gateway.config().maxQueryChars());
    JsonArray results = search(query.toString());
    assertThat(results.getJsonObject(0).getString("document_id")).isEqualTo(ferryId);
    assertThat(results.getJsonObject(0).getString("content")).contains("swell");
  }

  @Test
  @DisplayName("a query at the length limit, of hundreds of distinct terms that all have postings, is answered")
  void hundredsOfTerms() {
    StringBuilder query = new StringBuilder();
    for (String w : vocabulary()) {
      if (query.length() + w.length() + 1 > gateway.config().maxQueryChars()) {
        break;
      }
      query.append(w).append(' ');
    }
    String text = query.toString().strip();
    assertThat(text.split(" ")).hasSizeGreaterThan(200);
    JsonArray results = search(text);
    assertThat(results.getJsonObject(0).getString("document_id")).isEqualTo(glossaryId);
  }
}
