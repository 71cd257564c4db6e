package dev.quarry.ingest;

import static dev.quarry.ingest.IngestFixture.await;
import static dev.quarry.ingest.IngestFixture.embedder;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.search.SearchHit;
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

/**
 * An analyst's question names a ratio; the filing states the line items it is made of, in a
 * statement that never names the ratio, among prose that shares the question's other words.
 */
@DisplayName("A question about a financial metric finds the statement its figures are in")
class StatementSearchTest {
  @AutoClose
  private static final TestStack stack = TestStack.start();
  private static final TestDatabase db = stack.db();
  private static final Vertx vertx = stack.vertx();
  private static final Pool pool = stack.pool();
  @TempDir static Path fsRoot;

  private static final String FILING = """
      # Item 7. Management's discussion and analysis

      We believe that the non-GAAP measures we present are useful to investors because they explain
      the profile of our business; a company like this one states them alongside its GAAP results.

      Our key metrics profile: annualized recurring revenue grew as of fiscal 2022, and we explain
      changes in the metric each quarter. Investors should not consider any single metric useful alone.

      # Item 8. Consolidated statements of income

      | | 2022 | 2021 | 2020 |
      |---|---|---|---|
      | Total revenue | $ 17,606 | $ 15,785 | $ 12,868 |
      | Total cost of revenue | 2,165 | 1,865 | 1,722 |
      | Gross profit | 15,441 | 13,920 | 11,146 |
      | Research and development | 2,987 | 2,540 | 2,188 |
      | Sales and marketing | 4,968 | 4,321 | 3,591 |
      | Total operating expenses | 9,343 | 8,118 | 6,909 |
      | Operating income | 6,098 | 5,802 | 4,237 |
      | Interest expense | (112) | (113) | (116) |
      | Income before income taxes | 6,008 | 5,705 | 4,176 |
      | Provision for income taxes | 1,252 | 883 | (1,084) |
      | Net income | $ 4,756 | $ 4,822 | $ 5,260 |

      # Item 9. Property and equipment

      Property and equipment are depreciated over their useful lives: buildings 40 years, computer
      equipment 2 to 5 years. We state them at cost and explain impairments in the notes.

      # Item 10. Stockholders

      As of fiscal 2022 we had 462 million shares outstanding; we explain our repurchase program in the
      notes and state that it is useful for returning capital to investors of a company like ours.
      """;

  private static SearchService search;
  private static UUID tenant;

  @BeforeAll
  static void ingest() throws Exception {
    IngestService ingest = new IngestService(vertx, pool, embedder(), new DocumentsFs(vertx, pool, fsRoot), db.config());
    search = new SearchService(vertx, pool, embedder(), db.config());
    db.prepare(vertx, search);
    tenant = IngestFixture.newTenant(db);
    await(ingest.ingest(tenant, IngestFixture.text("ACME_2022_10K.md", null, FILING)));
  }

  @Test
  @DisplayName("an operating margin question with an analyst's instructions gets the income statement first")
  void operatingMarginFindsIncomeStatement() {
    List<SearchHit> hits = search.search(tenant, new SearchRequest("Does Acme have an improving operating margin"
        + " profile as of FY2022? If operating margin is not a useful metric for a company like this, then state"
        + " that and explain why.", 3)).await();
    assertThat(hits).isNotEmpty();
    assertThat(hits.get(0).content()).contains("| Operating income |");
  }

  @Test
  @DisplayName("an effective tax rate question gets the income statement first")
  void taxRateFindsIncomeStatement() {
    List<SearchHit> hits = search.search(tenant, new SearchRequest(
        "How does Acme's effective tax rate in FY2022 compare to FY2021?", 3)).await();
    assertThat(hits).isNotEmpty();
    assertThat(hits.get(0).content()).contains("| Provision for income taxes |");
  }
}
