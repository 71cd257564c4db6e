package dev.quarry.bench;

import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.store.embedding.EmbeddingMatch;
import dev.langchain4j.store.embedding.EmbeddingSearchRequest;
import dev.langchain4j.store.embedding.pgvector.PgVectorEmbeddingStore;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * The LangChain4j baseline: PgVectorEmbeddingStore 1.11.0-beta19 in its HYBRID search mode (vector
 * and PostgreSQL full-text, fused by reciprocal rank inside one SQL statement), on the same vectors.
 * Its text search configuration is set to {@code english} (the store's default is {@code simple}),
 * which is the fair setting for English corpora.
 */
public final class LangChainPgVector implements Retriever {
  private static final String TABLE = "lc4j_chunks";
  private static final int INSERT_BATCH = 500;

  private final Connection connection;
  private final PgVectorEmbeddingStore store;
  private final Map<String, String> docIdByEmbeddingId = new HashMap<>();
  private final String label;

  /**
   * @param ivfflatLists 0 for exact vector search (no index), else an ivfflat index with that many
   *     lists, rebuilt once the rows are in (the store creates it on the empty table, where ivfflat
   *     cannot learn its centroids)
   */
  public LangChainPgVector(BenchDatabase db, List<String> docIds, List<String> texts, List<float[]> vectors,
      int ivfflatLists) throws SQLException {
    this.connection = db.jdbc();
    this.label = "LangChain4j PgVectorEmbeddingStore HYBRID"
        + (ivfflatLists > 0 ? " (ivfflat, lists=" + ivfflatLists + ")" : " (exact vector scan)");
    this.store = PgVectorEmbeddingStore.datasourceBuilder()
        .datasource(singleConnection(connection))
        .table(TABLE)
        .dimension(vectors.get(0).length)
        .useIndex(ivfflatLists > 0)
        .indexListSize(Math.max(1, ivfflatLists))
        .createTable(true)
        .dropTableFirst(true)
        .searchMode(PgVectorEmbeddingStore.SearchMode.HYBRID)
        .textSearchConfig("english")
        .build();
    for (int from = 0; from < docIds.size(); from += INSERT_BATCH) {
      int to = Math.min(docIds.size(), from + INSERT_BATCH);
      List<String> ids = new ArrayList<>(to - from);
      List<Embedding> embeddings = new ArrayList<>(to - from);
      List<TextSegment> segments = new ArrayList<>(to - from);
      for (int i = from; i < to; i++) {
        String id = UUID.nameUUIDFromBytes(docIds.get(i).getBytes(StandardCharsets.UTF_8)).toString();
        docIdByEmbeddingId.put(id, docIds.get(i));
        ids.add(id);
        embeddings.add(Embedding.from(vectors.get(i)));
        segments.add(TextSegment.from(texts.get(i)));
      }
      store.addAll(ids, embeddings, segments);
    }
    try (Statement s = connection.createStatement()) {
      if (ivfflatLists > 0) {
        s.execute("REINDEX TABLE " + TABLE);
      }
      s.execute("ANALYZE " + TABLE);
    }
  }

  @Override
  public String name() {
    return label;
  }

  @Override
  public List<String> rank(String query, float[] vector, int k) {
    List<EmbeddingMatch<TextSegment>> matches = store.search(EmbeddingSearchRequest.builder()
        .query(query)
        .queryEmbedding(Embedding.from(vector))
        .maxResults(k)
        .minScore(0.0)
        .build()).matches();
    List<String> ids = new ArrayList<>(matches.size());
    for (EmbeddingMatch<TextSegment> m : matches) {
      ids.add(docIdByEmbeddingId.getOrDefault(m.embeddingId(), m.embeddingId()));
    }
    return ids;
  }

  @Override
  public void close() throws SQLException {
    connection.close();
  }

  /**
   * The store opens and closes a connection per call; handing it one long-lived connection (whose
   * close is ignored) measures its queries rather than PostgreSQL's connection start-up, as a pool
   * would in production.
   */
  private static DataSource singleConnection(Connection real) {
    Connection shared = (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
        new Class<?>[] {Connection.class}, (proxy, method, args) -> {
          if (method.getName().equals("close")) {
            return null;
          }
          try {
            return method.invoke(real, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
    return new DataSource() {
      @Override public Connection getConnection() { return shared; }
      @Override public Connection getConnection(String user, String password) { return shared; }
      @Override public PrintWriter getLogWriter() { return null; }
      @Override public void setLogWriter(PrintWriter out) {}
      @Override public void setLoginTimeout(int seconds) {}
      @Override public int getLoginTimeout() { return 0; }
      @Override public Logger getParentLogger() { return Logger.getGlobal(); }
      @Override public <T> T unwrap(Class<T> iface) throws SQLException { throw new SQLException("not a wrapper"); }
      @Override public boolean isWrapperFor(Class<?> iface) { return false; }
    };
  }
}
