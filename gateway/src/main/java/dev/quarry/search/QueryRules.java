package dev.quarry.search;

import dev.quarry.config.Config;
import java.util.Optional;

/**
 * What a search's query and limit must be, checked and worded once for every way a search arrives:
 * {@code POST /v1/search}, a sandbox's {@code search()} callback, and {@link SearchService} itself.
 * Each surface only decides how a problem reaches its caller (a 400 naming the field, a ValueError
 * naming the call); the rule and its wording are these.
 *
 * @param maxLimit      the most hits one search returns ({@code QUARRY_SEARCH_MAX_LIMIT})
 * @param maxQueryChars the longest query, in UTF-16 units ({@code QUARRY_MAX_QUERY_CHARS})
 */
public record QueryRules(int maxLimit, int maxQueryChars) {
  /** Which argument a problem is about. */
  public enum Argument { QUERY, LIMIT }

  /** Why a query or a limit is refused, worded for whoever sent it. */
  public record Problem(Argument argument, String message) {}

  public static QueryRules of(Config config) {
    return new QueryRules(config.searchMaxLimit(), config.maxQueryChars());
  }

  /** The first problem of this query and limit, if any. */
  public Optional<Problem> check(String query, long limit) {
    if (query == null || query.isBlank()) {
      return problem(Argument.QUERY, "'query' is empty");
    }
    // PostgreSQL's text refuses U+0000; say so rather than let the database fail the search.
    if (query.indexOf('\0') >= 0) {
      return problem(Argument.QUERY, "'query' contains a NUL character (\\x00)");
    }
    if (query.length() > maxQueryChars) {
      return problem(Argument.QUERY, "'query' has " + query.length() + " characters; the limit is " + maxQueryChars);
    }
    if (limit < 1 || limit > maxLimit) {
      return problem(Argument.LIMIT, "'limit' must be between 1 and " + maxLimit + ", got " + limit);
    }
    return Optional.empty();
  }

  private static Optional<Problem> problem(Argument argument, String message) {
    return Optional.of(new Problem(argument, message));
  }
}
