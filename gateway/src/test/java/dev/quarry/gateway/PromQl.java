package dev.quarry.gateway;

import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The metric names a PromQL expression reads: what is left once strings, label matchers, range
 * selectors, grouping clauses, functions, keywords and numbers are taken out. Enough for the
 * expressions in monitoring/, which the promtool checks parse properly.
 */
final class PromQl {
  private static final Set<String> KEYWORDS = Set.of("and", "or", "unless", "by", "without", "on",
      "ignoring", "group_left", "group_right", "offset", "bool", "inf", "nan");
  private static final Pattern IDENTIFIER = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");

  private PromQl() {}

  static Set<String> metricNames(String expr) {
    String s = expr
        .replaceAll("\"(?:[^\"\\\\]|\\\\.)*\"", "\"\"")
        .replaceAll("\\{[^}]*}", " ")
        .replaceAll("\\[[^]]*]", " ")
        .replaceAll("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)", " ")
        .replaceAll("\\$\\w+", " ");
    Set<String> names = new TreeSet<>();
    Matcher m = IDENTIFIER.matcher(s);
    while (m.find()) {
      String token = m.group();
      int after = m.end();
      while (after < s.length() && s.charAt(after) == ' ') {
        after++;
      }
      boolean function = after < s.length() && s.charAt(after) == '(';
      boolean number = m.start() > 0 && Character.isDigit(s.charAt(m.start() - 1));
      if (!function && !number && !KEYWORDS.contains(token.toLowerCase(java.util.Locale.ROOT))) {
        names.add(token);
      }
    }
    return names;
  }
}
