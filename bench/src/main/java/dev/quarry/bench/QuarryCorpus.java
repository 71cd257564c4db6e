package dev.quarry.bench;

import dev.quarry.ingest.Chunk;

import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyManager;

/**
 * Puts a collection into Quarry's own schema, one document = one item = one chunk, with the cached
 * vectors: exactly the rows an ingest of a one-paragraph text file writes, without paying for the
 * model again. Rows go in by COPY, with the chunk table's secondary indexes dropped during the load
 * and rebuilt after it (their definitions read back from the catalogue, so whatever the migrations
 * declare is what gets measured).
 */
public final class QuarryCorpus {
  private static final int COPY_BATCH = 5_000;

  /** Chunk ids back to the collection's document ids, to score rankings. */
  private final Map<UUID, String> docIdByChunk = new HashMap<>();

  public String docId(UUID chunkId) {
    return docIdByChunk.getOrDefault(chunkId, chunkId.toString());
  }

  public static QuarryCorpus load(BenchDatabase db, UUID tenant, String embeddingModel, List<String> docIds,
      List<String> texts, List<float[]> vectors) throws SQLException, IOException {
    Iterator<SyntheticCorpus.Chunk> rows = new Iterator<>() {
      private int next;

      @Override
      public boolean hasNext() {
        return next < docIds.size();
      }

      @Override
      public SyntheticCorpus.Chunk next() {
        int i = next++;
        return new SyntheticCorpus.Chunk(docIds.get(i), texts.get(i), vectors.get(i));
      }
    };
    return load(db, tenant, embeddingModel, rows, false, true);
  }

  /**
   * Loads chunks as they come, without holding them all. With {@code bulk}, chunk_terms' indexes
   * (its primary key included) are also dropped for the load and rebuilt after it, as a bulk load
   * of a large corpus would do: otherwise every posting the trigger writes is an insert into a
   * term-ordered B-tree of tens of millions of rows, at a random place. The rows are the same
   * either way. With {@code remember} false, the chunk-to-document map is not kept (a million
   * entries nobody reads when only latency is measured).
   */
  public static QuarryCorpus load(BenchDatabase db, UUID tenant, String embeddingModel,
      Iterator<SyntheticCorpus.Chunk> rows, boolean bulk, boolean remember) throws SQLException, IOException {
    QuarryCorpus corpus = new QuarryCorpus();
    try (Connection c = db.jdbc()) {
      List<String> indexes = secondaryIndexes(c, "chunks");
      List<String> termIndexes = bulk ? secondaryIndexes(c, "chunk_terms") : List.of();
      String termKey = bulk ? primaryKey(c, "chunk_terms") : null;
      try (Statement s = c.createStatement()) {
        for (String def : indexes) {
          s.execute("DROP INDEX " + indexName(def));
        }
        for (String def : termIndexes) {
          s.execute("DROP INDEX " + indexName(def));
        }
        if (termKey != null) {
          s.execute("ALTER TABLE chunk_terms DROP CONSTRAINT " + termKey.split(" ", 2)[0]);
        }
      }
      // COPY refuses a table whose row-level security applies to the caller, and the migrations force
      // it on the owner too. This throwaway database is loaded by its owner, so the force is lifted
      // for the load (triggers fill chunk_terms and the statistics under the same rule) and put back.
      List<String> forced = forcedTables(c);
      setForce(c, forced, false);
      try {
      CopyManager copy = c.unwrap(PGConnection.class).getCopyAPI();
      while (rows.hasNext()) {
        StringBuilder documents = new StringBuilder();
        StringBuilder items = new StringBuilder();
        StringBuilder chunks = new StringBuilder();
        for (int n = 0; n < COPY_BATCH && rows.hasNext(); n++) {
          SyntheticCorpus.Chunk row = rows.next();
          String id = row.id();
          String text = row.text();
          UUID documentId = UUID.nameUUIDFromBytes(("doc:" + id).getBytes(StandardCharsets.UTF_8));
          UUID chunkId = UUID.nameUUIDFromBytes(("chunk:" + id).getBytes(StandardCharsets.UTF_8));
          if (remember) {
            corpus.docIdByChunk.put(chunkId, id);
          }
          String title = "doc " + id;
          row(documents, documentId, tenant, title, "bench/" + id + ".txt", "text", sha256(id + "\0" + text),
              text.getBytes(StandardCharsets.UTF_8).length, text,
              "{\"doc_id\": \"" + documentId + "\", \"title\": \"" + title + "\", \"tree\": []}", 1, 1);
          row(items, tenant, documentId, 0, "#/texts/0", "paragraph", text, "{}", 0, 0, 0, 1);
          // Context version current: the bench's chunks have no context on purpose, and a gateway
          // started over them must not re-index them (Reembedder).
          row(chunks, chunkId, tenant, documentId, 0, 0, 1, "{}", text, Chunk.CONTEXT_VERSION, "{}",
              "{\"#/texts/0\"}", "{paragraph}", embeddingModel, vectorLiteral(row.vector()));
        }
        copy.copyIn("COPY documents (id, tenant_id, title, uri, source_type, content_hash, byte_size, content,"
            + " toc, item_count, chunk_count) FROM STDIN", new StringReader(documents.toString()));
        copy.copyIn("COPY items (tenant_id, document_id, position, self_ref, label, text, page_numbers,"
            + " heading_level, tree_depth, section_start, section_end) FROM STDIN", new StringReader(items.toString()));
        copy.copyIn("COPY chunks (id, tenant_id, document_id, ordinal, item_start, item_end, headings, content,"
            + " context_version, page_numbers, doc_item_refs, labels, embedding_model, embedding) FROM STDIN",
            new StringReader(chunks.toString()));
      }
      } finally {
        setForce(c, forced, true);
      }
      try (Statement s = c.createStatement()) {
        s.execute("SET maintenance_work_mem = '" + MAINTENANCE_WORK_MEM + "'");
        if (termKey != null) {
          s.execute("ALTER TABLE chunk_terms ADD CONSTRAINT " + termKey);
        }
        for (String def : termIndexes) {
          s.execute(def);
        }
        for (String def : indexes) {
          s.execute(def);
        }
        s.execute("ANALYZE documents");
        s.execute("ANALYZE items");
        s.execute("ANALYZE chunks");
      }
    }
    return corpus;
  }

  /**
   * Memory for building indexes after a load (the session's own setting; the server's default is
   * 64 MB): enough for an HNSW graph of a million 384-dimension vectors to be built in memory.
   */
  static final String MAINTENANCE_WORK_MEM = "2GB";

  /** "name definition" of a table's primary key, as ADD CONSTRAINT takes it back. */
  static String primaryKey(Connection c, String table) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint"
            + " WHERE conrelid = '" + table + "'::regclass AND contype = 'p'")) {
      return rs.next() ? rs.getString(1) : null;
    }
  }

  /** The tables of the current schema whose row-level security also holds their owner. */
  static List<String> forcedTables(Connection c) throws SQLException {
    List<String> tables = new ArrayList<>();
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT relname FROM pg_class WHERE relkind = 'r' AND relforcerowsecurity"
            + " AND relnamespace = current_schema()::regnamespace")) {
      while (rs.next()) {
        tables.add(rs.getString(1));
      }
    }
    return tables;
  }

  private static void setForce(Connection c, List<String> tables, boolean force) throws SQLException {
    try (Statement s = c.createStatement()) {
      for (String t : tables) {
        s.execute("ALTER TABLE " + t + (force ? " FORCE" : " NO FORCE") + " ROW LEVEL SECURITY");
      }
    }
  }

  /** The CREATE INDEX statements of a table's indexes that no constraint owns. */
  static List<String> secondaryIndexes(Connection c, String table) throws SQLException {
    List<String> defs = new ArrayList<>();
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT indexdef FROM pg_indexes i WHERE tablename = '" + table + "'"
            + " AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conname = i.indexname)")) {
      while (rs.next()) {
        defs.add(rs.getString(1));
      }
    }
    return defs;
  }

  private static String indexName(String def) {
    // "CREATE [UNIQUE] INDEX name ON ..."
    String afterIndex = def.substring(def.indexOf(" INDEX ") + 7).trim();
    return afterIndex.substring(0, afterIndex.indexOf(' '));
  }

  private static void row(StringBuilder out, Object... values) {
    for (int i = 0; i < values.length; i++) {
      if (i > 0) {
        out.append('\t');
      }
      escape(out, String.valueOf(values[i]));
    }
    out.append('\n');
  }

  /** COPY text format: backslash, tab, newline and carriage return are escaped. */
  private static void escape(StringBuilder out, String s) {
    for (int i = 0; i < s.length(); i++) {
      char ch = s.charAt(i);
      switch (ch) {
        case '\\' -> out.append("\\\\");
        case '\t' -> out.append("\\t");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        default -> out.append(ch);
      }
    }
  }

  static String vectorLiteral(float[] v) {
    StringBuilder sb = new StringBuilder(v.length * 10).append('[');
    for (int i = 0; i < v.length; i++) {
      if (i > 0) {
        sb.append(',');
      }
      sb.append(v[i]);
    }
    return sb.append(']').toString();
  }

  private static String sha256(String text) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
