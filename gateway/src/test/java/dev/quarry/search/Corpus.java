package dev.quarry.search;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Writes documents, items and chunks straight into the tables, the way ingestion lays them out:
 * innermost-section ranges on items, chunks over item ranges with their embeddings. Lets search be
 * tested on exactly the structure a test needs.
 */
final class Corpus {
  private final Connection jdbc;
  private final Embedder embedder;

  Corpus(Connection jdbc, Embedder embedder) {
    this.jdbc = jdbc;
    this.embedder = embedder;
  }

  UUID tenant(String name) throws SQLException {
    UUID id = UUID.randomUUID();
    try (PreparedStatement s = jdbc.prepareStatement("INSERT INTO tenants (id, name) VALUES (?, ?)")) {
      s.setObject(1, id);
      s.setString(2, name);
      s.executeUpdate();
    }
    return id;
  }

  Doc doc(UUID tenant, String title) {
    return new Doc(tenant, title);
  }

  record Item(String label, String text, List<Integer> pages, int headingLevel) {
    boolean header() {
      return label.equals("section_header") || label.equals("title");
    }
  }

  record Chunk(UUID id, int itemStart, int itemEnd) {}

  final class Doc {
    private final UUID tenant;
    private final String title;
    private final List<Item> items = new ArrayList<>();
    private final List<int[]> chunkRanges = new ArrayList<>();
    private int page = 1;

    private Doc(UUID tenant, String title) {
      this.tenant = tenant;
      this.title = title;
    }

    Doc page(int page) {
      this.page = page;
      return this;
    }

    Doc header(int level, String text) {
      items.add(new Item("section_header", text, List.of(page), level));
      return this;
    }

    Doc item(String label, String text) {
      items.add(new Item(label, text, List.of(page), 0));
      return this;
    }

    Doc text(String text) {
      return item("text", text);
    }

    /** The next item position, to name chunk ranges. */
    int next() {
      return items.size();
    }

    /** A chunk over items [start, end); without any, each non-furniture item is a chunk. */
    Doc chunk(int start, int end) {
      chunkRanges.add(new int[] {start, end});
      return this;
    }

    Inserted insert() throws SQLException {
      List<int[]> ranges = chunkRanges;
      if (ranges.isEmpty()) {
        ranges = new ArrayList<>();
        for (int i = 0; i < items.size(); i++) {
          if (!ContextExpander.FURNITURE.contains(items.get(i).label())) {
            ranges.add(new int[] {i, i + 1});
          }
        }
      }
      UUID docId = UUID.randomUUID();
      StringBuilder all = new StringBuilder();
      for (Item it : items) {
        all.append(it.text()).append("\n\n");
      }
      try (PreparedStatement s = jdbc.prepareStatement("""
          INSERT INTO documents (id, tenant_id, title, uri, source_type, content_hash, byte_size,
                                 content, toc, item_count, chunk_count)
          VALUES (?, ?, ?, ?, 'markdown', ?, ?, ?, '{"tree": []}'::jsonb, ?, ?)""")) {
        s.setObject(1, docId);
        s.setObject(2, tenant);
        s.setString(3, title);
        s.setString(4, "file:" + title.replaceAll("\\W+", "-") + "-" + docId + ".md");
        s.setString(5, docId.toString());
        s.setLong(6, all.length());
        s.setString(7, all.toString());
        s.setInt(8, items.size());
        s.setInt(9, ranges.size());
        s.executeUpdate();
      }
      int[][] sections = sections();
      try (PreparedStatement s = jdbc.prepareStatement("""
          INSERT INTO items (tenant_id, document_id, position, self_ref, label, text, page_numbers,
                             heading_level, tree_depth, section_start, section_end)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)""")) {
        for (int i = 0; i < items.size(); i++) {
          Item it = items.get(i);
          s.setObject(1, tenant);
          s.setObject(2, docId);
          s.setInt(3, i);
          s.setString(4, selfRef(i));
          s.setString(5, it.label());
          s.setString(6, it.text());
          s.setArray(7, jdbc.createArrayOf("integer", it.pages().toArray()));
          s.setInt(8, it.headingLevel());
          s.setInt(9, sections[i][0]);
          s.setInt(10, sections[i][1]);
          s.addBatch();
        }
        s.executeBatch();
      }
      List<String> texts = new ArrayList<>();
      for (int[] r : ranges) {
        texts.add(join(r[0], r[1]));
      }
      List<float[]> vectors = embedder.embedPassages(texts);
      List<Chunk> chunks = new ArrayList<>();
      try (PreparedStatement s = jdbc.prepareStatement("""
          INSERT INTO chunks (id, tenant_id, document_id, ordinal, item_start, item_end, headings,
                              content, page_numbers, doc_item_refs, labels, embedding_model, embedding)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::vector)""")) {
        for (int c = 0; c < ranges.size(); c++) {
          int[] r = ranges.get(c);
          UUID id = UUID.randomUUID();
          chunks.add(new Chunk(id, r[0], r[1]));
          List<Integer> pages = new ArrayList<>();
          List<String> refs = new ArrayList<>();
          List<String> labels = new ArrayList<>();
          for (int i = r[0]; i < r[1]; i++) {
            items.get(i).pages().stream().filter(p -> !pages.contains(p)).forEach(pages::add);
            refs.add(selfRef(i));
            if (!labels.contains(items.get(i).label())) {
              labels.add(items.get(i).label());
            }
          }
          s.setObject(1, id);
          s.setObject(2, tenant);
          s.setObject(3, docId);
          s.setInt(4, c);
          s.setInt(5, r[0]);
          s.setInt(6, r[1]);
          s.setArray(7, jdbc.createArrayOf("text", headings(r[0]).toArray()));
          s.setString(8, texts.get(c));
          s.setArray(9, jdbc.createArrayOf("integer", pages.toArray()));
          s.setArray(10, jdbc.createArrayOf("text", refs.toArray()));
          s.setArray(11, jdbc.createArrayOf("text", labels.toArray()));
          s.setString(12, embedder.modelName());
          s.setString(13, vectorText(vectors.get(c)));
          s.addBatch();
        }
        s.executeBatch();
      }
      return new Inserted(docId, List.copyOf(chunks));
    }

    String join(int start, int end) {
      List<String> parts = new ArrayList<>();
      for (int i = start; i < end; i++) {
        parts.add(items.get(i).text());
      }
      return String.join("\n\n", parts);
    }

    String selfRef(int position) {
      String label = items.get(position).label();
      return label.equals("table") ? "#/tables/" + position : "#/texts/" + position;
    }

    /** Innermost section of each item: from its header to the next header of the same or higher level. */
    private int[][] sections() {
      int n = items.size();
      int[][] out = new int[n][];
      int[] end = new int[n];
      for (int i = 0; i < n; i++) {
        end[i] = n;
        if (items.get(i).header()) {
          for (int j = i + 1; j < n; j++) {
            if (items.get(j).header() && items.get(j).headingLevel() <= items.get(i).headingLevel()) {
              end[i] = j;
              break;
            }
          }
        }
      }
      for (int i = 0; i < n; i++) {
        int owner = -1;
        for (int h = i; h >= 0; h--) {
          if (items.get(h).header() && end[h] > i) {
            owner = h;
            break;
          }
        }
        if (owner < 0) {
          int firstHeader = n;
          for (int j = 0; j < n; j++) {
            if (items.get(j).header()) {
              firstHeader = j;
              break;
            }
          }
          out[i] = new int[] {0, firstHeader};
        } else {
          out[i] = new int[] {owner, end[owner]};
        }
      }
      return out;
    }

    private List<String> headings(int position) {
      List<String> path = new ArrayList<>();
      int level = Integer.MAX_VALUE;
      for (int h = position; h >= 0; h--) {
        Item it = items.get(h);
        if (it.header() && it.headingLevel() < level) {
          path.add(0, it.text());
          level = it.headingLevel();
        }
      }
      return path;
    }
  }

  record Inserted(UUID documentId, List<Chunk> chunks) {
    UUID chunkAt(int itemPosition) {
      for (Chunk c : chunks) {
        if (c.itemStart() <= itemPosition && itemPosition < c.itemEnd()) {
          return c.id();
        }
      }
      throw new IllegalArgumentException("no chunk holds item " + itemPosition);
    }
  }

  /**
   * Loads many short texts fast, for tests at scale: documents of {@code perDocument} texts, one
   * item and one chunk per text, and a random unit vector per chunk (seeded), since embedding
   * thousands of texts would take minutes and full-text search does not read vectors. Returns the
   * documents in order; {@code chunkKeys} gets each chunk's key (the first of its pair).
   */
  static List<UUID> bulk(Connection c, UUID tenant, List<String[]> keyedTexts, int perDocument,
      String titlePrefix, String model, int dims, java.util.Map<UUID, String> chunkKeys) throws SQLException {
    java.util.Random random = new java.util.Random(42);
    List<UUID> documents = new ArrayList<>();
    try (PreparedStatement doc = c.prepareStatement("""
            INSERT INTO documents (id, tenant_id, title, uri, source_type, content_hash, byte_size,
                                   content, toc, item_count, chunk_count)
            VALUES (?, ?, ?, ?, 'text', ?, 0, '', '{"tree": []}'::jsonb, ?, ?)""");
        PreparedStatement item = c.prepareStatement("""
            INSERT INTO items (tenant_id, document_id, position, self_ref, label, text, page_numbers,
                               heading_level, tree_depth, section_start, section_end)
            VALUES (?, ?, ?, ?, 'text', ?, '{}', 0, 0, 0, ?)""");
        PreparedStatement chunk = c.prepareStatement("""
            INSERT INTO chunks (id, tenant_id, document_id, ordinal, item_start, item_end, headings,
                                content, page_numbers, doc_item_refs, labels, embedding_model, embedding)
            VALUES (?, ?, ?, ?, ?, ?, '{}', ?, '{}', ARRAY[?], '{text}', ?, ?::vector)""")) {
      for (int start = 0; start < keyedTexts.size(); start += perDocument) {
        List<String[]> part = keyedTexts.subList(start, Math.min(keyedTexts.size(), start + perDocument));
        UUID docId = UUID.randomUUID();
        documents.add(docId);
        doc.setObject(1, docId);
        doc.setObject(2, tenant);
        doc.setString(3, titlePrefix + " " + part.get(0)[0] + "-" + part.get(part.size() - 1)[0]);
        doc.setString(4, titlePrefix.toLowerCase().replaceAll("\\W+", "-") + "/" + start);
        doc.setString(5, docId.toString());
        doc.setInt(6, part.size());
        doc.setInt(7, part.size());
        doc.executeUpdate();
        for (int i = 0; i < part.size(); i++) {
          item.setObject(1, tenant);
          item.setObject(2, docId);
          item.setInt(3, i);
          item.setString(4, "#/texts/" + i);
          item.setString(5, part.get(i)[1]);
          item.setInt(6, part.size());
          item.addBatch();
          UUID chunkId = UUID.randomUUID();
          chunkKeys.put(chunkId, part.get(i)[0]);
          chunk.setObject(1, chunkId);
          chunk.setObject(2, tenant);
          chunk.setObject(3, docId);
          chunk.setInt(4, i);
          chunk.setInt(5, i);
          chunk.setInt(6, i + 1);
          chunk.setString(7, part.get(i)[1]);
          chunk.setString(8, "#/texts/" + i);
          chunk.setString(9, model);
          chunk.setString(10, randomUnitVector(random, dims));
          chunk.addBatch();
        }
        item.executeBatch();
        chunk.executeBatch();
      }
    }
    return documents;
  }

  static String randomUnitVector(java.util.Random random, int dims) {
    float[] v = new float[dims];
    double norm = 0;
    for (int i = 0; i < dims; i++) {
      v[i] = (float) random.nextGaussian();
      norm += v[i] * v[i];
    }
    norm = Math.sqrt(norm);
    for (int i = 0; i < dims; i++) {
      v[i] /= (float) norm;
    }
    return vectorText(v);
  }

  static String vectorText(float[] v) {
    StringBuilder b = new StringBuilder("[");
    for (int i = 0; i < v.length; i++) {
      b.append(i == 0 ? "" : ",").append(v[i]);
    }
    return b.append(']').toString();
  }
}
