package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("A query is searched without instructions to whoever answers it, and with the line items of a metric it names")
class SearchQueryTest {

  @Test
  @DisplayName("a conditional instruction after the question is left out of both sides")
  void conditionalInstructionDropped() {
    SearchQuery q = SearchQuery.of("Has Initech's quick ratio improved or declined between FY2023 and FY2022?"
        + " If the quick ratio is not something that a financial analyst would ask about a company like this,"
        + " then state that and explain why.");
    assertThat(q.fullText()).doesNotContain("explain").doesNotContain("analyst").startsWith(
        "Has Initech's quick ratio improved or declined between FY2023 and FY2022? ");
    assertThat(q.embedded()).doesNotContain("explain").doesNotContain("analyst");
  }

  @Test
  @DisplayName("a sentence that sets the answer's unit goes; one that says where to look stays")
  void answerFormatDropped() {
    String asked = "What is the FY2022 unadjusted EBITDA less capex for Globex? Define unadjusted EBITDA as"
        + " unadjusted operating income + depreciation and amortization from the cash flow statement.";
    assertThat(SearchQuery.withoutInstructions(asked + " Answer in USD millions.")).isEqualTo(asked);
    assertThat(SearchQuery.withoutInstructions(asked + " Round your answer to two decimal places.")).isEqualTo(asked);
  }

  @Test
  @DisplayName("the first sentence is kept whatever it says, and so is a query with nothing to drop")
  void questionKept() {
    String conditional = "If the pump stops, what should the operator explain to the inspector?";
    assertThat(SearchQuery.withoutInstructions(conditional)).isEqualTo(conditional);
    String two = "What drove the increase in inventories? If demand fell, why did stores keep buying?";
    assertThat(SearchQuery.withoutInstructions(two)).isEqualTo(two);
    String plain = "what similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft .";
    assertThat(SearchQuery.of(plain)).isEqualTo(new SearchQuery(plain, plain));
  }

  @Test
  @DisplayName("a named metric brings the captions of the line items it is computed from")
  void metricLineItems() {
    SearchQuery margin = SearchQuery.of("Does Initech have an improving operating margin profile as of FY2022?");
    assertThat(margin.fullText()).contains("operating income").contains("total revenue");
    assertThat(margin.embedded()).startsWith("Does Initech have an improving operating margin profile as of FY2022? (")
        .contains("operating income");
    assertThat(SearchQuery.of("Is Initech a capital intensive business based on FY 2022 data?").fullText())
        .contains("purchases of property and equipment");
    assertThat(SearchQuery.of("How did the effective tax rate change?").fullText())
        .contains("provision for income taxes").contains("income before income taxes");
    assertThat(SearchQuery.of("Has the quick ratio improved?").fullText())
        .contains("total current liabilities").doesNotContain("gross profit");
  }

  @Test
  @DisplayName("an acronym counts only in capitals, so ordinary words are not taken for one")
  void acronymsInCapitalsOnly() {
    assertThat(FinancialVocabulary.lineItems("What was Initech's ROE in 2022?")).contains("total stockholders' equity");
    assertThat(FinancialVocabulary.lineItems("Where does the roe deer graze in winter?")).isEmpty();
    assertThat(FinancialVocabulary.lineItems("How do herons hunt at dusk?")).isEmpty();
  }
}
