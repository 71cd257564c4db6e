package dev.quarry.search;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * What a query is searched with: the text BM25 matches ({@code fullText}) and the text the model
 * embeds ({@code embedded}). Both are the caller's query with two changes, and are the query itself
 * when neither applies:
 *
 * <ul>
 *   <li><b>Instructions to whoever answers are left out.</b> A question written for an analyst (or
 *       a model) often ends with what to do when it cannot be answered as asked: "If operating
 *       margin is not a useful metric for a company like this, then state that and explain why.",
 *       "Answer in USD millions." Those sentences describe the answer, not the passage that holds
 *       it; their words ("useful", "state", "explain", "company") match passages at random and pull
 *       the query's vector away from the evidence. Only a sentence after the first goes: a
 *       conditional one ("If …") that tells the reader to state, explain, answer or say something,
 *       or one that sets the answer's unit or rounding. The first sentence is always kept.
 *   <li><b>A financial metric brings the line items it is computed from</b>
 *       ({@link FinancialVocabulary}): "operating margin" adds "operating income, total revenue, …",
 *       the captions of the statement its figures are in. BM25 gets them as more terms; the model
 *       gets them in parentheses after the question.
 * </ul>
 */
record SearchQuery(String fullText, String embedded) {

  /** Where one sentence ends and the next begins. */
  private static final Pattern SENTENCE_BREAK = Pattern.compile("(?<=[.?!])\\s+(?=[\"'(\\[]?[A-Z])");

  /** "If X is not useful, then state that and explain why." */
  private static final Pattern CONDITIONAL_INSTRUCTION = Pattern.compile(
      "if\\b.*\\b(state|explain|answer|respond|reply|say|mention|indicate|note|write|return|output)\\b.*",
      Pattern.CASE_INSENSITIVE | Pattern.DOTALL);

  /** "Answer in USD millions.", "Round your answer to two decimal places." */
  private static final Pattern ANSWER_FORMAT = Pattern.compile(
      "(please\\s+)?(answer|round|express|give|provide|report|respond|state)\\b.*"
          + "\\b(millions?|billions?|thousands?|decimals?|percent(age)?|places|usd|units?|format)\\b.*",
      Pattern.CASE_INSENSITIVE | Pattern.DOTALL);

  static SearchQuery of(String query) {
    String asked = withoutInstructions(query);
    String lineItems = FinancialVocabulary.lineItems(asked);
    if (lineItems.isEmpty()) {
      return new SearchQuery(asked, asked);
    }
    return new SearchQuery(asked + " " + lineItems, asked + " (" + lineItems + ")");
  }

  /** The query without its sentences after the first that instruct whoever answers it. */
  static String withoutInstructions(String query) {
    String[] sentences = SENTENCE_BREAK.split(query.strip());
    if (sentences.length < 2) {
      return query;
    }
    List<String> kept = new ArrayList<>(sentences.length);
    kept.add(sentences[0]);
    boolean dropped = false;
    for (int i = 1; i < sentences.length; i++) {
      String s = sentences[i];
      if (CONDITIONAL_INSTRUCTION.matcher(s).matches() || ANSWER_FORMAT.matcher(s).matches()) {
        dropped = true;
      } else {
        kept.add(s);
      }
    }
    return dropped ? String.join(" ", kept) : query;
  }
}
