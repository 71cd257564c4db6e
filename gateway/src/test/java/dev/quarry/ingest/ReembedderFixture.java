package dev.quarry.ingest;

import dev.quarry.search.Embedder;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

/**
 * Chunks as an earlier deployment left them: written under other embedding models (one with
 * other dimensions, with its own HNSW index, as after a switch between providers), next to a few
 * already under the current model. Rows go in through plain INSERTs, so the BM25 triggers index
 * them as ingestion would.
 */
final class ReembedderFixture {
  /** A model of other dimensions, as when switching from a hosted embedder to the local one. */
  static final String OLD_SMALL_MODEL = "old-embedder-8";
  static final int OLD_SMALL_DIMS = 8;
  static final String OLD_MODEL = "old-embedder-384";

  private static final String[] ANIMALS = {"heron", "badger", "otter", "lynx", "marten", "vole"};
  private static final String[] PLACES = {"the northern marsh", "the quarry pond", "the pine ridge",
      "the river delta", "the chalk downs", "the old orchard", "the salt flats"};
  private static final String[] HABITS = {"hunts at dusk", "nests in reed beds",
      "stores seeds for winter", "migrates in early spring", "sleeps through the cold months"};

  /** A chunk whose subject no other chunk shares, for vector search to find. */
  static final String LIGHTHOUSE = "The lighthouse keeper on Marrow Isle winds the clockwork lamp "
      + "every evening and records each passing cargo ship in a leather logbook.";
  static final String LIGHTHOUSE_QUERY = "who records the ships passing the island lighthouse";

  record Inserted(UUID tenantA, UUID tenantB, List<UUID> stale, List<UUID> current,
      UUID lighthouse) {
    int staleCount() {
      return stale.size();
    }
  }

  private ReembedderFixture() {}

  /** Empties the knowledge base, so each test starts from the same rows. */
  static void clear(Connection c) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute("TRUNCATE documents, items, chunks, chunk_terms, corpus_stats");
      s.execute("DELETE FROM tenants WHERE name <> 'default'");
    }
  }

  /**
   * {@code staleA} chunks in the default tenant and {@code staleB} in another, under the two old
   * models in turn, plus {@code current} chunks already embedded by {@code embedder} (which may
   * be null when there are none).
   */
  static Inserted insert(Connection c, Embedder embedder, UUID tenantA, int staleA, int staleB,
      int current) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute("CREATE INDEX IF NOT EXISTS chunks_hnsw_old_small ON chunks USING hnsw"
          + " ((embedding::vector(" + OLD_SMALL_DIMS + ")) vector_cosine_ops)"
          + " WHERE embedding_model = '" + OLD_SMALL_MODEL + "'");
    }
    UUID tenantB = UUID.randomUUID();
    try (PreparedStatement s = c.prepareStatement("INSERT INTO tenants (id, name) VALUES (?, ?)")) {
      s.setObject(1, tenantB);
      s.setString(2, "globex-" + tenantB);
      s.executeUpdate();
    }
    Random random = new Random(42);
    List<UUID> stale = new ArrayList<>();
    List<UUID> currentIds = new ArrayList<>();
    UUID docA = document(c, tenantA, "Field notes A");
    UUID docB = document(c, tenantB, "Field notes B");
    int ordinal = 0;
    UUID lighthouse = null;
    for (int i = 0; i < staleA; i++) {
      String content = i == 0 ? LIGHTHOUSE : sentence(i);
      UUID id = chunk(c, tenantA, docA, ordinal++, content, oldModel(i), oldVector(i, random));
      stale.add(id);
      if (i == 0) {
        lighthouse = id;
      }
    }
    for (int i = 0; i < staleB; i++) {
      stale.add(chunk(c, tenantB, docB, i, sentence(1000 + i), oldModel(i), oldVector(i, random)));
    }
    List<String> texts = new ArrayList<>();
    for (int i = 0; i < current; i++) {
      texts.add("Already current: " + sentence(2000 + i));
    }
    List<float[]> vectors = current == 0 ? List.of() : embedder.embedPassages(texts);
    for (int i = 0; i < current; i++) {
      currentIds.add(chunk(c, tenantA, docA, ordinal++, texts.get(i), embedder.modelName(),
          IngestService.vectorLiteral(vectors.get(i))));
    }
    return new Inserted(tenantA, tenantB, List.copyOf(stale), List.copyOf(currentIds), lighthouse);
  }

  private static String oldModel(int i) {
    return i % 2 == 0 ? OLD_MODEL : OLD_SMALL_MODEL;
  }

  private static String oldVector(int i, Random random) {
    float[] v = new float[i % 2 == 0 ? 384 : OLD_SMALL_DIMS];
    for (int d = 0; d < v.length; d++) {
      v[d] = random.nextFloat() - 0.5f;
    }
    return IngestService.vectorLiteral(v);
  }

  private static String sentence(int i) {
    return "Observation " + i + ": the " + ANIMALS[i % ANIMALS.length] + " of "
        + PLACES[(i / ANIMALS.length) % PLACES.length] + " " + HABITS[i % HABITS.length] + ".";
  }

  private static UUID document(Connection c, UUID tenant, String title) throws SQLException {
    UUID id = UUID.randomUUID();
    try (PreparedStatement s = c.prepareStatement("""
        INSERT INTO documents (id, tenant_id, title, uri, source_type, content_hash, byte_size,
                               content, toc, item_count, chunk_count)
        VALUES (?, ?, ?, ?, 'text', ?, 0, '', '{"tree": []}'::jsonb, 0, 0)""")) {
      s.setObject(1, id);
      s.setObject(2, tenant);
      s.setString(3, title);
      s.setString(4, "notes-" + id + ".txt");
      s.setString(5, id.toString());
      s.executeUpdate();
    }
    return id;
  }

  private static UUID chunk(Connection c, UUID tenant, UUID doc, int ordinal, String content,
      String model, String vector) throws SQLException {
    UUID id = UUID.randomUUID();
    try (PreparedStatement s = c.prepareStatement("""
        INSERT INTO chunks (id, tenant_id, document_id, ordinal, item_start, item_end, headings,
                            content, context_version, page_numbers, doc_item_refs, labels,
                            embedding_model, embedding)
        VALUES (?, ?, ?, ?, ?, ?, '{}', ?, ?, '{}', ?, '{text}', ?, ?::vector)""")) {
      s.setObject(1, id);
      s.setObject(2, tenant);
      s.setObject(3, doc);
      s.setInt(4, ordinal);
      s.setInt(5, ordinal);
      s.setInt(6, ordinal + 1);
      s.setString(7, content);
      // Only the model is stale here; an old context is ContextReindexTest's case.
      s.setInt(8, Chunk.CONTEXT_VERSION);
      s.setArray(9, c.createArrayOf("text", new String[] {"#/texts/" + ordinal}));
      s.setString(10, model);
      s.setString(11, vector);
      s.executeUpdate();
    }
    return id;
  }

  /** Each chunk's model and vector, read back from PostgreSQL. */
  record Stored(String model, float[] vector, String content, String xmin) {}

  static Map<UUID, Stored> chunks(Connection c) throws SQLException {
    Map<UUID, Stored> out = new HashMap<>();
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(
            "SELECT id, embedding_model, embedding::text, content, xmin::text FROM chunks")) {
      while (rs.next()) {
        out.put(rs.getObject(1, UUID.class),
            new Stored(rs.getString(2), parse(rs.getString(3)), rs.getString(4), rs.getString(5)));
      }
    }
    return out;
  }

  /**
   * Every chunk_terms row with its row version (xmin): a rewrite of a row, even with the same
   * values, gives it a new xmin.
   */
  static Map<String, String> termRows(Connection c) throws SQLException {
    Map<String, String> out = new HashMap<>();
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT tenant_id, term, chunk_id, tf, token_count,"
            + " xmin::text FROM chunk_terms")) {
      while (rs.next()) {
        out.put(rs.getString(1) + "/" + rs.getString(2) + "/" + rs.getString(3) + "/"
            + rs.getInt(4) + "/" + rs.getInt(5), rs.getString(6));
      }
    }
    return out;
  }

  /** Each tenant's corpus statistics row with its row version. */
  /** Each tenant's chunk count and total tokens (the BM25 statistics), by tenant. */
  static Map<String, String> corpusStats(Connection c) throws SQLException {
    Map<String, String> out = new HashMap<>();
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT tenant_id, chunk_count, total_tokens FROM corpus_stats")) {
      while (rs.next()) {
        out.put(rs.getString(1), rs.getLong(2) + "/" + rs.getLong(3));
      }
    }
    return out;
  }

  /** Each tenant's version of its search data (term_version, migrations V13 and V15), by tenant. */
  static Map<String, Long> versions(Connection c) throws SQLException {
    Map<String, Long> out = new HashMap<>();
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT tenant_id, term_version FROM corpus_stats")) {
      while (rs.next()) {
        out.put(rs.getString(1), rs.getLong(2));
      }
    }
    return out;
  }

  static long count(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static float[] parse(String literal) {
    String[] parts = literal.substring(1, literal.length() - 1).split(",");
    float[] v = new float[parts.length];
    for (int i = 0; i < parts.length; i++) {
      v[i] = Float.parseFloat(parts[i]);
    }
    return v;
  }
}
