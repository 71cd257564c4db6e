package dev.quarry.bench;

import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.store.embedding.EmbeddingMatch;
import dev.langchain4j.store.embedding.EmbeddingSearchRequest;
import dev.langchain4j.store.embedding.pgvector.PgVectorEmbeddingStore;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringReader;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyManager;

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
    this(db, vectors.get(0).length, ivfflatLists, true);
    for (int from = 0; from < docIds.size(); from += INSERT_BATCH) {
      int to = Math.min(docIds.size(), from + INSERT_BATCH);
      List<String> ids = new ArrayList<>(to - from);
      List<Embedding> embeddings = new ArrayList<>(to - from);
      List<TextSegment> segments = new ArrayList<>(to - from);
      for (int i = from; i < to; i++) {
        String id = embeddingId(docIds.get(i));
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

  private LangChainPgVector(BenchDatabase db, int dimensions, int ivfflatLists, boolean create)
      throws SQLException {
    this.connection = db.jdbc();
    this.label = "LangChain4j PgVectorEmbeddingStore HYBRID"
        + (ivfflatLists > 0 ? " (ivfflat, lists=" + ivfflatLists + ")" : " (exact vector scan)");
    this.store = PgVectorEmbeddingStore.datasourceBuilder()
        .datasource(singleConnection(connection))
        .table(TABLE)
        .dimension(dimensions)
        .useIndex(ivfflatLists > 0)
        .indexListSize(Math.max(1, ivfflatLists))
        .createTable(create)
        .dropTableFirst(create)
        .searchMode(PgVectorEmbeddingStore.SearchMode.HYBRID)
        .textSearchConfig("english")
        .build();
  }

  /**
   * A large corpus, loaded as one would bulk-load the store's table: the store creates its table and
   * indexes (the full-text GIN index and the ivfflat one), the indexes are dropped, the rows go in
   * by COPY, and the very same index definitions (read back from the catalogue) are built after,
   * with the database's {@code maintenance_work_mem}. The rows are those {@code addAll} writes
   * (id, vector, text; no metadata). Rank results are the store's ids, not mapped back.
   */
  public static LangChainPgVector bulk(BenchDatabase db, Iterator<SyntheticCorpus.Chunk> rows, int dimensions,
      int ivfflatLists) throws SQLException, IOException {
    LangChainPgVector lc = new LangChainPgVector(db, dimensions, ivfflatLists, true);
    Connection c = lc.connection;
    List<String> indexes = QuarryCorpus.secondaryIndexes(c, TABLE);
    try (Statement s = c.createStatement()) {
      for (String def : indexes) {
        s.execute("DROP INDEX " + def.substring(def.indexOf(" INDEX ") + 7).trim().split(" ", 2)[0]);
      }
    }
    CopyManager copy = c.unwrap(PGConnection.class).getCopyAPI();
    while (rows.hasNext()) {
      StringBuilder batch = new StringBuilder();
      for (int n = 0; n < COPY_BATCH && rows.hasNext(); n++) {
        SyntheticCorpus.Chunk row = rows.next();
        batch.append(embeddingId(row.id())).append('\t').append(QuarryCorpus.vectorLiteral(row.vector()))
            .append('\t').append(copyText(row.text())).append('\n');
      }
      copy.copyIn("COPY " + TABLE + " (embedding_id, embedding, text) FROM STDIN", new StringReader(batch.toString()));
    }
    try (Statement s = c.createStatement()) {
      for (String def : indexes) {
        s.execute(def);
      }
      s.execute("ANALYZE " + TABLE);
    }
    return lc;
  }

  /** The store's table as a bulk load left it in a kept database. */
  public static LangChainPgVector existing(BenchDatabase db, int dimensions, int ivfflatLists) throws SQLException {
    return new LangChainPgVector(db, dimensions, ivfflatLists, false);
  }

  private static final int COPY_BATCH = 5_000;

  private static String embeddingId(String docId) {
    return UUID.nameUUIDFromBytes(docId.getBytes(StandardCharsets.UTF_8)).toString();
  }

  /** COPY text format: backslash, tab, newline and carriage return escaped. */
  private static String copyText(String s) {
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r");
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
