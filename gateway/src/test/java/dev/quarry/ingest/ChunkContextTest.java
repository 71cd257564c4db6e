package dev.quarry.ingest;

import static dev.quarry.ingest.IngestFixture.await;
import static dev.quarry.ingest.IngestFixture.embedder;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.search.RankedChunk;
import dev.quarry.search.SearchHit;
import dev.quarry.search.SearchMode;
import dev.quarry.search.SearchRequest;
import dev.quarry.search.SearchService;
import dev.quarry.store.DocumentsFs;
import dev.quarry.support.TestDatabase;
import dev.quarry.support.TestStack;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayName("A chunk is found by the name of its document; its content stays its own text")
class ChunkContextTest {
  @AutoClose
  private static final TestStack stack = TestStack.start();
  private static final TestDatabase db = stack.db();
  private static final Vertx vertx = stack.vertx();
  private static final Pool pool = stack.pool();
  @TempDir static Path fsRoot;

  // The same words in both filings: only the file names tell the companies and years apart.
  private static final String BODY = "Capital expenditures for the year were 1,577 million dollars, "
      + "mostly for new manufacturing capacity and the modernisation of existing plants.";

  private static SearchService search;
  private static UUID tenant;
  private static UUID acme;
  private static UUID globex;

  @BeforeAll
  static void ingest() throws Exception {
    IngestService ingest = new IngestService(vertx, pool, embedder(), new DocumentsFs(vertx, pool, fsRoot), db.config());
    search = new SearchService(vertx, pool, embedder(), db.config());
    db.prepare(vertx, search);
    tenant = IngestFixture.newTenant(db);
    acme = await(ingest.ingest(tenant, IngestFixture.text("ACME_2018_10K.txt", null, BODY))).documentId();
    globex = await(ingest.ingest(tenant, IngestFixture.text("GLOBEX_2021_10Q.txt", null, BODY + " "))).documentId();
  }

  @Test
  @DisplayName("BM25 and the vectors both put the named filing's chunk first")
  void namedDocumentFirst() throws Exception {
    for (SearchMode mode : SearchMode.values()) {
      List<RankedChunk> ranked = await(search.rank(tenant, "What was Globex's capital expenditure in 2021?", mode, 2));
      assertThat(ranked).as(mode.name()).isNotEmpty();
      assertThat(ranked.get(0).documentId()).as(mode.name()).isEqualTo(globex);
    }
    assertThat(await(search.rank(tenant, "ACME 2018 capex", SearchMode.HYBRID, 1)).get(0).documentId())
        .isEqualTo(acme);
  }

  @Test
  @DisplayName("the hit's content is the document's text, without the name it was found by")
  void contentUnchanged() throws Exception {
    List<SearchHit> hits = await(search.search(tenant, new SearchRequest("Globex 2021 capital expenditures", 2)));
    assertThat(hits).isNotEmpty();
    assertThat(hits).allSatisfy(h -> assertThat(h.content()).doesNotContainIgnoringCase("globex")
        .doesNotContainIgnoringCase("acme").contains("Capital expenditures"));
  }

  @Test
  @DisplayName("a filing's company, form and period join the context where its name does not say them")
  void identityBeyondTheName() {
    FilingIdentity adobe = new FilingIdentity("ADOBE INC.", "Form 10-K", "fiscal year ended December 2, 2022", "FY2022");
    // An accession number says nothing: everything the cover page says goes in.
    assertThat(Chunk.context("UNITED STATES SECURITIES AND EXCHANGE COMMISSION", "0000796343-23-000007.pdf", adobe))
        .isEqualTo("UNITED STATES SECURITIES AND EXCHANGE COMMISSION | 0000796343 23 000007 | ADOBE INC. | Form 10-K"
            + " | fiscal year ended December 2, 2022 | FY2022");
    // A FinanceBench-style name already says all three: nothing is repeated.
    assertThat(Chunk.context("UNITED STATES SECURITIES AND EXCHANGE COMMISSION", "ADOBE_2022_10K.pdf", adobe))
        .isEqualTo("UNITED STATES SECURITIES AND EXCHANGE COMMISSION | ADOBE 2022 10K");
    // Only what is missing: here the year (the title's 2023 is the filing date, not the period).
    assertThat(Chunk.context("Form 10-K for Pepsico INC filed 02/09/2023", "pepsico-annual.pdf",
            new FilingIdentity("PepsiCo, Inc.", "Form 10-K", "fiscal year ended December 31, 2022", "FY2022")))
        .isEqualTo("Form 10-K for Pepsico INC filed 02/09/2023 | pepsico annual | fiscal year ended December 31, 2022 | FY2022");
    assertThat(Chunk.context("THE BOEING COMPANY", "annual-report.pdf",
            new FilingIdentity("THE BOEING COMPANY", null, null, null)))
        .isEqualTo("THE BOEING COMPANY | annual report");
  }

  @Test
  @DisplayName("the context is the title and the file name with its separators as spaces, once")
  void context() {
    assertThat(Chunk.context("ADOBE_2022_10K.pdf", "ADOBE_2022_10K.pdf")).isEqualTo("ADOBE_2022_10K.pdf | ADOBE 2022 10K");
    assertThat(Chunk.context("Annual report", "s3://bucket/reports/PEPSICO_2022_10K.pdf"))
        .isEqualTo("Annual report | PEPSICO 2022 10K");
    assertThat(Chunk.context("Pepsico 2022 10K filing", "PEPSICO_2022_10K.pdf")).isEqualTo("Pepsico 2022 10K filing");
    assertThat(Chunk.context("Notes", null)).isEqualTo("Notes");
    assertThat(Chunk.context("Notes", null, null)).isEqualTo("Notes");
    assertThat(Chunk.embeddedText("", "text")).isEqualTo("text");
    assertThat(Chunk.embeddedText("T", "text")).isEqualTo("T\n\ntext");
  }
}
