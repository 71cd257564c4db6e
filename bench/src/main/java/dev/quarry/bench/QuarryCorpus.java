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
    QuarryCorpus corpus = new QuarryCorpus();
    try (Connection c = db.jdbc()) {
      List<String> indexes = secondaryIndexes(c, "chunks");
      try (Statement s = c.createStatement()) {
        for (String def : indexes) {
          s.execute("DROP INDEX " + indexName(def));
        }
      }
      // COPY refuses a table whose row-level security applies to the caller, and the migrations force
      // it on the owner too. This throwaway database is loaded by its owner, so the force is lifted
      // for the load (triggers fill chunk_terms and the statistics under the same rule) and put back.
      List<String> forced = forcedTables(c);
      setForce(c, forced, false);
      try {
      CopyManager copy = c.unwrap(PGConnection.class).getCopyAPI();
      for (int from = 0; from < docIds.size(); from += COPY_BATCH) {
        int to = Math.min(docIds.size(), from + COPY_BATCH);
        StringBuilder documents = new StringBuilder();
        StringBuilder items = new StringBuilder();
        StringBuilder chunks = new StringBuilder();
        for (int i = from; i < to; i++) {
          String id = docIds.get(i);
          String text = texts.get(i);
          UUID documentId = UUID.nameUUIDFromBytes(("doc:" + id).getBytes(StandardCharsets.UTF_8));
          UUID chunkId = UUID.nameUUIDFromBytes(("chunk:" + id).getBytes(StandardCharsets.UTF_8));
          corpus.docIdByChunk.put(chunkId, id);
          String title = "doc " + id;
          row(documents, documentId, tenant, title, "bench/" + id + ".txt", "text", sha256(id + "\0" + text),
              text.getBytes(StandardCharsets.UTF_8).length, text,
              "{\"doc_id\": \"" + documentId + "\", \"title\": \"" + title + "\", \"tree\": []}", 1, 1);
          row(items, tenant, documentId, 0, "#/texts/0", "paragraph", text, "{}", 0, 0, 0, 1);
          // Context version current: the bench's chunks have no context on purpose, and a gateway
          // started over them must not re-index them (Reembedder).
          row(chunks, chunkId, tenant, documentId, 0, 0, 1, "{}", text, Chunk.CONTEXT_VERSION, "{}",
              "{\"#/texts/0\"}", "{paragraph}", embeddingModel, vectorLiteral(vectors.get(i)));
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
        s.execute("SET maintenance_work_mem = '512MB'");
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
