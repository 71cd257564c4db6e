package dev.quarry.ingest;

import static dev.quarry.ingest.IngestFixture.await;
import static dev.quarry.ingest.IngestFixture.embedder;
import static dev.quarry.ingest.IngestFixture.newTenant;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.ingest.IngestFixture.Instrumented;
import dev.quarry.store.Database;
import dev.quarry.support.SharedData;
import dev.quarry.support.TestDatabase;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Measures ingest throughput on real text and how much of it the embedder takes. */
@DisplayName("Ingest throughput")
class IngestThroughputTest {

  @Test
  @DisplayName("ingests a few hundred chunks of real abstracts and reports chunks/s and the embedding share")
  void throughput() throws Exception {
    // 200 Cranfield abstracts, one Markdown section each: real prose, a realistic chunk count.
    String cran = Files.readString(SharedData.path("retrieval/cranfield/cran.all.1400"), StandardCharsets.UTF_8);
    Matcher m = Pattern.compile("\\.T\\n(.*?)\\n\\.A.*?\\.W\\n(.*?)(?=\\n\\.I |\\z)", Pattern.DOTALL).matcher(cran);
    StringBuilder md = new StringBuilder("# Cranfield abstracts\n\n");
    int docs = 0;
    while (m.find() && docs < 200) {
      md.append("## ").append(m.group(1).replace('\n', ' ').strip()).append("\n\n")
          .append(m.group(2).strip()).append("\n\n");
      docs++;
    }
    byte[] bytes = md.toString().getBytes(StandardCharsets.UTF_8);

    try (TestDatabase db = TestDatabase.create()) {
      Vertx vertx = Vertx.vertx();
      Pool pool = Database.pool(vertx, db.config());
      try {
        UUID tenant = newTenant(db);
        Instrumented timed = new Instrumented(embedder(), out -> out);
        IngestService service = new IngestService(vertx, pool, timed, null, db.config());
        embedder().embedPassages(java.util.List.of("warm-up")); // model load is not ingest time

        long t0 = System.nanoTime();
        IngestResult r = await(service.ingest(tenant,
            new IngestRequest("cranfield.md", "bench:cranfield", null, null, bytes)));
        double seconds = (System.nanoTime() - t0) / 1e9;
        double embedSeconds = timed.nanos / 1e9;

        assertThat(r.chunkCount()).isGreaterThanOrEqualTo(200);
        System.out.printf("INGEST THROUGHPUT: %d bytes, %d items, %d chunks in %.2f s = %.1f chunks/s;"
                + " embedding %.2f s (%.0f%%, %d calls), the rest %.2f s (%.0f%%)%n",
            bytes.length, r.itemCount(), r.chunkCount(), seconds, r.chunkCount() / seconds,
            embedSeconds, 100 * embedSeconds / seconds, timed.calls, seconds - embedSeconds,
            100 * (seconds - embedSeconds) / seconds);
      } finally {
        await(pool.close());
        await(vertx.close());
      }
    }
  }
}
