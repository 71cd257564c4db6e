package dev.quarry.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * {@link TableGrid#isRule} replaced two regular expressions that recursed once a column: it must
 * say what they said on every line they can still match, and answer for a rule of any width.
 */
@Label("A table's rule is recognised as the regular expressions did, at any width")
class TableRuleTest {
  private static final java.util.regex.Pattern OPTIONAL_PIPES =
      java.util.regex.Pattern.compile("\\|?\\s*:?-{3,}:?\\s*(\\|\\s*:?-{3,}:?\\s*)*\\|?");
  private static final java.util.regex.Pattern PIPED = java.util.regex.Pattern.compile("\\|(\\s*:?-+:?\\s*\\|)+");

  @Provide
  Arbitrary<String> lines() {
    return Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(3, Arbitraries.strings().withChars("|-: \t").ofMaxLength(40)),
        net.jqwik.api.Tuple.of(2, Arbitraries.strings().withChars("|-:").ofMaxLength(40)),
        net.jqwik.api.Tuple.of(1, Arbitraries.strings().withChars("|-:ab 1").ofMaxLength(20)),
        net.jqwik.api.Tuple.of(2, Arbitraries.of("|---|", "---", "|---", "---|", "| :---: | ---: |", "|-|", "|",
            "", "||", "|--|--|", "| --- | -- |")));
  }

  @Property(tries = 2_000)
  void agreesWithTheExpressions(@ForAll("lines") String line) {
    assertThat(TableGrid.isRule(line, 3, false)).as("'" + line + "' (3 dashes, optional pipes)")
        .isEqualTo(OPTIONAL_PIPES.matcher(line).matches());
    assertThat(TableGrid.isRule(line, 1, true)).as("'" + line + "' (piped)").isEqualTo(PIPED.matcher(line).matches());
  }

  @Test
  void anyWidth() {
    String rule = "|" + "---|".repeat(200_000);
    assertThat(TableGrid.isRule(rule, 3, false)).isTrue();
    assertThat(TableGrid.isRule(rule, 1, true)).isTrue();
    assertThat(TableGrid.isRule(rule + "x", 1, true)).isFalse();
  }
}
