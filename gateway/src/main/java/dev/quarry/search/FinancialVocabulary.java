package dev.quarry.search;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The line items an analyst's metric is computed from. A question asks for a ratio ("operating
 * margin", "quick ratio", "capex"); a filing states the figures it is made of ("Operating income",
 * "Total current liabilities", "Purchases of property and equipment"), mostly in statements whose
 * text never names the ratio. Naming the line items finds the statement.
 *
 * <p>Written from general accounting definitions (a metric's textbook formula and the usual US GAAP
 * captions of its inputs), not from the wording of any filing Quarry was measured on. A concept is
 * matched only when the query names it: a query about anything else is left alone. Phrases match
 * whatever their case; an acronym only in capitals, so that "roe" or "dpo" inside ordinary prose is
 * not taken for one.
 */
final class FinancialVocabulary {
  private FinancialVocabulary() {}

  /** A metric: how a query names it, and the line items it is computed from. */
  private record Concept(Pattern named, String lineItems) {}

  private static final List<Concept> CONCEPTS = List.of(
      concept("gross (profit )?margins?|gross profit", "",
          "gross profit, cost of revenue, cost of sales, total revenue, net sales"),
      concept("operating (profit )?margins?|ebit margins?|operating income margins?", "",
          "operating income, income from operations, total revenue, net sales, operating expenses"),
      concept("net (profit )?margins?|profit margins?", "",
          "net income, total revenue, net sales"),
      concept("ebitdar?( margins?)?", "EBITDAR?",
          "operating income, depreciation and amortization"),
      concept("quick ratio|acid[- ]test( ratio)?", "",
          "cash and cash equivalents, short-term investments, accounts receivable, total current assets,"
              + " total current liabilities"),
      concept("current ratio|working capital|liquidity", "",
          "total current assets, total current liabilities, cash and cash equivalents"),
      concept("capital expenditures?|capital[- ]intensive|capital intensity", "CAPEX|[Cc]apex",
          "capital expenditures, purchases of property and equipment, property, plant and equipment, depreciation"),
      concept("free cash ?flows?|cash ?flow conversion", "FCF",
          "net cash provided by operating activities, capital expenditures, purchases of property and equipment"),
      concept("(effective )?(income )?tax rates?", "ETR",
          "provision for income taxes, income tax expense, income before income taxes, effective tax rate"),
      concept("interest coverage( ratio)?", "",
          "interest expense, operating income"),
      concept("debt[- ]to[- ]equity|leverage ratio|total debt", "",
          "long-term debt, short-term borrowings, total stockholders' equity"),
      concept("inventory turnover|days (of )?inventory|inventory days", "DIO",
          "inventories, cost of sales"),
      concept("days sales outstanding|receivables? turnover", "DSO",
          "accounts receivable, revenue"),
      concept("days payables? outstanding|payables? turnover", "DPO",
          "accounts payable, cost of sales"),
      concept("return on (total )?assets", "ROA",
          "net income, total assets"),
      concept("return on (shareholders'? |stockholders'? )?equity", "ROE",
          "net income, total stockholders' equity"),
      concept("dividend payout( ratio)?|payout ratio", "",
          "dividends paid, net income"),
      concept("asset turnover", "",
          "total revenue, total assets"));

  private static Concept concept(String phrases, String acronyms, String lineItems) {
    String either = "(?i:\\b(?:" + phrases + ")\\b)" + (acronyms.isEmpty() ? "" : "|\\b(?:" + acronyms + ")\\b");
    return new Concept(Pattern.compile(either), lineItems);
  }

  /**
   * The line items of every metric the query names, each concept's once, joined by "; "; empty when
   * it names none.
   */
  static String lineItems(String query) {
    List<String> found = new ArrayList<>();
    for (Concept c : CONCEPTS) {
      if (c.named().matcher(query).find()) {
        found.add(c.lineItems());
      }
    }
    return String.join("; ", found);
  }
}
