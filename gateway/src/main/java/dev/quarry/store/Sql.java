package dev.quarry.store;

/**
 * Every statement of the document store and the ingest transaction, by name, in one place. Each one
 * filters by {@code tenant_id}: a statement that forgot it would leak another tenant's documents.
 */
public final class Sql {
  private Sql() {}

  private static final String SUMMARY_COLUMNS = "id, title, uri, source_type, content_hash, byte_size,"
      + " item_count, chunk_count, version, created_at, updated_at";

  /** The first page of the listing; a null limit is no limit. */
  public static final String LIST_DOCUMENTS_FIRST = "SELECT " + SUMMARY_COLUMNS
      + " FROM documents WHERE tenant_id = $1 ORDER BY created_at, id LIMIT $2";

  /** The page after a position of the listing (created_at, id); a null limit is no limit. */
  public static final String LIST_DOCUMENTS_AFTER = "SELECT " + SUMMARY_COLUMNS
      + " FROM documents WHERE tenant_id = $1 AND (created_at, id) > ($2, $3)"
      + " ORDER BY created_at, id LIMIT $4";

  public static final String GET_DOCUMENT = "SELECT " + SUMMARY_COLUMNS
      + " FROM documents WHERE tenant_id = $1 AND id = $2";

  /** Items and chunks go with it (ON DELETE CASCADE). */
  public static final String DELETE_DOCUMENT = "DELETE FROM documents WHERE tenant_id = $1 AND id = $2";

  /** What tells whether the /documents copy of a document is current: its version marker. */
  public static final String DOCUMENT_VERSION =
      "SELECT version, content_hash FROM documents WHERE tenant_id = $1 AND id = $2";

  /** One chunk of one document: the items it came from ({@code item_start} to {@code item_end}, exclusive). */
  public static final String GET_CHUNK = "SELECT id, item_start, item_end, headings, page_numbers, doc_item_refs,"
      + " labels, content FROM chunks WHERE tenant_id = $1 AND document_id = $2 AND id = $3";

  /** What the /documents filesystem needs to decide which directories are stale. */
  public static final String LIST_DOCUMENT_VERSIONS = "SELECT id, version, content_hash, item_count"
      + " FROM documents WHERE tenant_id = $1";

  /** Some documents' whole materialised view: metadata, content.txt and toc.json. */
  public static final String GET_DOCUMENTS_FILES = "SELECT id, title, uri, created_at, version,"
      + " content_hash, content, toc FROM documents WHERE tenant_id = $1 AND id = ANY($2)";

  /** The items of some documents, a document's in order. */
  public static final String LIST_ITEMS_OF_DOCUMENTS = "SELECT document_id, position, self_ref, label, text,"
      + " page_numbers, heading_level, tree_depth FROM items WHERE tenant_id = $1 AND document_id = ANY($2)"
      + " ORDER BY document_id, position";

  // The ingest transaction.

  /**
   * The document an ingest is about: the uri is a document's identity, its bytes are not (two uris
   * may hold the same bytes, V17). Its hash tells whether the ingest changes anything.
   */
  public static final String FIND_BY_URI = "SELECT id, title, source_type, item_count, chunk_count, content_hash"
      + " FROM documents WHERE tenant_id = $1 AND uri = $2";

  /** Held to commit: a tenant's ingests check its stored-bytes quota one after the other. */
  public static final String LOCK_TENANT_STORAGE =
      "SELECT pg_advisory_xact_lock(hashtextextended('stored_bytes:' || $1::uuid::text, 0))";

  /**
   * What the tenant stores besides the version a new ingest of {@code uri} would replace: each
   * document's source bytes, title and uri (UTF-8 bytes), as the {@code stored_bytes} quota counts.
   */
  public static final String STORED_BYTES_EXCEPT_URI = "SELECT coalesce(sum(byte_size + octet_length(title)"
      + " + octet_length(uri)), 0)::bigint AS bytes FROM documents WHERE tenant_id = $1 AND uri <> $2";

  /** Locks the row so two replacements of one uri happen one after the other. */
  public static final String FIND_BY_URI_FOR_UPDATE = FIND_BY_URI + " FOR UPDATE";

  /**
   * Returns no row when a concurrent ingest of the same uri won the race: the caller then
   * looks again instead of failing on the unique constraint.
   */
  public static final String INSERT_DOCUMENT = "INSERT INTO documents (id, tenant_id, title, uri,"
      + " source_type, content_hash, byte_size, content, toc, item_count, chunk_count)"
      + " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT DO NOTHING RETURNING "
      + DocumentsFs.WRITTEN_COLUMNS;

  public static final String REPLACE_DOCUMENT = "UPDATE documents SET title = $3, source_type = $4,"
      + " content_hash = $5, byte_size = $6, content = $7, toc = $8, item_count = $9,"
      + " chunk_count = $10, version = version + 1, updated_at = now()"
      + " WHERE tenant_id = $1 AND id = $2 RETURNING " + DocumentsFs.WRITTEN_COLUMNS;

  public static final String DELETE_CHUNKS =
      "DELETE FROM chunks WHERE tenant_id = $1 AND document_id = $2";

  public static final String DELETE_ITEMS = "DELETE FROM items WHERE tenant_id = $1 AND document_id = $2";

  /**
   * All of a document's items in one statement: one JSON array of row objects (JSON arrays become
   * the array columns), so the statement-level triggers fire once per document, not once per row.
   */
  public static final String INSERT_ITEMS = "INSERT INTO items (tenant_id, document_id, position,"
      + " self_ref, label, text, page_numbers, heading_level, tree_depth, section_start, section_end)"
      + " SELECT $1, $2, r.position, r.self_ref, r.label, r.text, r.page_numbers, r.heading_level,"
      + " r.tree_depth, r.section_start, r.section_end"
      + " FROM json_to_recordset($3::text::json) AS r(position integer, self_ref text, label text,"
      + " text text, page_numbers integer[], heading_level smallint, tree_depth smallint,"
      + " section_start integer, section_end integer)";

  /**
   * All of a document's chunks in one statement, so chunk_terms is filled by one INSERT … SELECT
   * (V5). The vector travels as pgvector's text form {@code [x,y,…]}; the client has no vector codec.
   */
  public static final String INSERT_CHUNKS = "INSERT INTO chunks (id, tenant_id, document_id, ordinal,"
      + " item_start, item_end, headings, content, context, context_version, page_numbers, doc_item_refs,"
      + " labels, embedding_model, embedding)"
      + " SELECT r.id, $1, $2, r.ordinal, r.item_start, r.item_end, r.headings, r.content, r.context,"
      + " $5,"
      + " r.page_numbers, r.doc_item_refs, r.labels, $3, r.embedding::vector"
      + " FROM json_to_recordset($4::text::json) AS r(id uuid, ordinal integer, item_start integer,"
      + " item_end integer, headings text[], content text, context text, page_numbers integer[],"
      + " doc_item_refs text[], labels text[], embedding text)";
}
