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
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
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
      # Item 1. Business

      Acme is a software company whose products help customers create, manage and measure digital
      content. We believe our business profile, with recurring subscriptions, is improving as of
      fiscal 2022, and that our competitive position is strong in every market we serve.

      # Segment information

      We report segment information based on the management approach, which designates the internal
      reporting used by management for making decisions and assessing performance. Our chief
      operating decision maker reviews revenue and gross profit of each segment as a useful metric.

      # Competition

      We participate in a highly competitive environment, where our competitors range from large
      multinational companies to small start-ups. We explain how a company like this one differentiates
      itself through its products, its brand and its distribution, and we state our strategy below.

      # Risk factors

      Our operating results may fluctuate; if we are unable to improve our profile with customers, our
      business could suffer. Investors should not consider any single metric a useful measure of our
      prospects, and we state that forward-looking statements involve risks we explain here.

      # Diversity and inclusion

      We strive to bring progress on diversity to our brand, products and community engagement, and we
      explain each year how our profile as an employer is improving as of the latest fiscal year.

      # Item 7. Management's discussion and analysis

      We believe that the non-GAAP measures we present are useful to investors because they explain
      the profile of our business; a company like this one states them alongside its GAAP results.

      # Item 8. Consolidated statements of income

      | | 2022 | 2021 | 2020 |
      |---|---|---|---|
      | Revenue: | | | |
      | Subscription | $ 16,388 | $ 14,573 | $ 11,626 |
      | Product | 532 | 555 | 507 |
      | Services and other | 686 | 657 | 735 |
      | Total revenue | 17,606 | 15,785 | 12,868 |
      | Cost of revenue: | | | |
      | Subscription | 1,646 | 1,374 | 1,108 |
      | Product | 35 | 41 | 36 |
      | Services and other | 484 | 450 | 578 |
      | Total cost of revenue | 2,165 | 1,865 | 1,722 |
      | Gross profit | 15,441 | 13,920 | 11,146 |
      | Operating expenses: | | | |
      | Research and development | 2,987 | 2,540 | 2,188 |
      | Sales and marketing | 4,968 | 4,321 | 3,591 |
      | General and administrative | 1,219 | 1,085 | 968 |
      | Amortization of intangibles | 169 | 172 | 162 |
      | Total operating expenses | 9,343 | 8,118 | 6,909 |
      | Operating income | 6,098 | 5,802 | 4,237 |
      | Non-operating income (expense): | | | |
      | Interest expense | (112) | (113) | (116) |
      | Investment gains (losses), net | (19) | 16 | 13 |
      | Other income (expense), net | 41 | — | 42 |
      | Total non-operating income (expense), net | (90) | (97) | (61) |
      | Income before income taxes | 6,008 | 5,705 | 4,176 |
      | Provision for income taxes | 1,252 | 883 | (1,084) |
      | Net income | $ 4,756 | $ 4,822 | $ 5,260 |
      | Basic net income per share | $ 10.13 | $ 10.10 | $ 10.94 |
      | Diluted net income per share | $ 10.10 | $ 10.02 | $ 10.83 |

      # Consolidated balance sheets

      | | December 2, 2022 | December 3, 2021 |
      |---|---|---|
      | Cash and cash equivalents | $ 4,236 | $ 3,844 |
      | Short-term investments | 1,860 | 1,954 |
      | Trade receivables, net | 2,065 | 1,878 |
      | Total current assets | 8,996 | 8,669 |
      | Goodwill | 12,787 | 12,668 |
      | Total assets | $ 27,165 | $ 27,241 |
      | Trade payables | $ 379 | $ 312 |
      | Accrued expenses | 1,790 | 1,736 |
      | Total current liabilities | 8,128 | 6,932 |
      | Total liabilities | 13,114 | 12,444 |
      | Total stockholders' equity | 14,051 | 14,797 |

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
  @DisplayName("BM25 ranks the balance sheet first for a quick ratio question, though no word of it is there")
  void quickRatioFindsBalanceSheet() {
    List<RankedChunk> ranked = search.rank(tenant, "Has Acme's quick ratio improved or declined between FY2022"
        + " and FY2021? If the quick ratio is not something that a financial analyst would ask about a company"
        + " like this, then state that and explain why.", SearchMode.FULL_TEXT, 3).await();
    assertThat(ranked).isNotEmpty();
    assertThat(content(ranked.get(0))).contains("| Total current liabilities |");
  }

  private static String content(RankedChunk chunk) throws RuntimeException {
    try (Connection c = db.jdbc(); PreparedStatement s = c.prepareStatement("SELECT content FROM chunks WHERE id = ?")) {
      s.setObject(1, chunk.chunkId());
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getString(1);
      }
    } catch (java.sql.SQLException e) {
      throw new RuntimeException(e);
    }
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
