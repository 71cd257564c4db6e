package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("OnnxEmbedder on long queries: the model runs on the first and last tokens only")
class OnnxLongQueryTest {
  private static final OnnxEmbedder EMBEDDER = (OnnxEmbedder) SharedEmbedder.get();

  /** {@code n} words, numbered so that every cut shows where it fell. */
  static String words(int n) {
    List<String> w = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      w.add("word" + i);
    }
    return String.join(" ", w);
  }

  @Test
  @DisplayName("a query within the budget is embedded as it is")
  void shortQueryUntouched() {
    String q = "what similarity laws must be obeyed when constructing aeroelastic models";
    assertThat(EMBEDDER.withinTokens(q, OnnxEmbedder.QUERY_TOKENS)).isEqualTo(q);
  }

  @Test
  @DisplayName("a long query keeps its opening and its closing question, and loses the middle")
  void headAndTail() {
    String question = "so when is the ferry cancelled in winter storms?";
    String q = "I pasted this from the notes. " + words(600) + " " + question;
    String cut = EMBEDDER.withinTokens(q, OnnxEmbedder.QUERY_TOKENS);
    assertThat(cut).startsWith("I pasted this from the notes.").endsWith(question).doesNotContain(" word300 ");
    assertThat(cut.length()).isLessThan(q.length() / 2);
    // What the model gets for the long query is the cut one's vector.
    assertThat(EMBEDDER.embedQuery(q)).containsExactly(EMBEDDER.embedQuery(cut));
  }

  @Test
  @DisplayName("a cut query is within the budget (cutting it again changes nothing) and is made of the query's own text")
  void cutIsWithinBudget() {
    for (int n : new int[] {1, 2, 63, 64, 65, 127, 128, 129, 300, 900}) {
      for (int budget : new int[] {8, 17, 64, 128, OnnxEmbedder.QUERY_TOKENS, 300}) {
        String q = words(n);
        String cut = EMBEDDER.withinTokens(q, budget);
        assertThat(EMBEDDER.withinTokens(cut, budget)).as("%d words, budget %d", n, budget).isEqualTo(cut);
        int space = cut.indexOf(' ');
        assertThat(q).startsWith(space < 0 ? cut : cut.substring(0, space + 1));
        assertThat(q).endsWith(cut.substring(cut.lastIndexOf(' ') + 1));
      }
    }
  }
}
