package dev.quarry.bench;

import java.util.List;
import java.util.Map;

/**
 * A ranked-retrieval test collection: documents, queries and graded judgments
 * ({@code qrels.get(queryId).get(docId)} is the grade, &gt; 0 for relevant).
 */
public record TestCollection(
    String name, List<Doc> docs, List<Query> queries, Map<String, Map<String, Integer>> qrels,
    int skippedEmptyDocs) {

  public record Doc(String id, String text) {}

  public record Query(String id, String text) {}

  /** The queries that have at least one relevant document: the only ones the metrics average over. */
  public List<Query> judgedQueries() {
    return queries.stream()
        .filter(q -> qrels.getOrDefault(q.id(), Map.of()).values().stream().anyMatch(g -> g > 0))
        .toList();
  }

  public int judgmentCount() {
    return qrels.values().stream().mapToInt(Map::size).sum();
  }
}
