package dev.quarry.bench;

import java.util.List;

/** One system under test, already holding a collection: ranks document ids for a query. */
public interface Retriever extends AutoCloseable {
  String name();

  /** The best {@code k} document ids, best first; {@code vector} is the query's cached embedding. */
  List<String> rank(String query, float[] vector, int k) throws Exception;

  @Override
  default void close() throws Exception {}
}
