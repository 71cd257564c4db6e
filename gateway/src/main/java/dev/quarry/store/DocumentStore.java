package dev.quarry.store;

import dev.quarry.store.DocItem;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Reads and deletes documents of one tenant. Writes happen in IngestService's transaction. */
public final class DocumentStore {
  private static final Logger LOG = LoggerFactory.getLogger(DocumentStore.class);

  private static final String EXISTING = "SELECT id FROM documents WHERE tenant_id = $1 AND id = ANY($2)";

  private final Pool pool;
  private final DocumentsFs documentsFs;

  public DocumentStore(Pool pool) {
    this(pool, null);
  }

  /** With a filesystem, a delete also removes the document's directory from {@code /documents}. */
  public DocumentStore(Pool pool, DocumentsFs documentsFs) {
    this.pool = pool;
    this.documentsFs = documentsFs;
  }

  /** The tenant's documents, oldest first. */
  public Future<List<DocumentSummary>> list(UUID tenantId) {
    return page(tenantId, null, null).map(Page::documents);
  }

  /**
   * A place in the listing's order (oldest first, then by id), just after a document that was
   * listed. It stays valid when that document is deleted.
   */
  public record ListPosition(OffsetDateTime createdAt, UUID id) {}

  /** Some of the listing, and where the next page starts (null when this is its end). */
  public record Page(List<DocumentSummary> documents, ListPosition next) {}

  /**
   * Up to {@code limit} of the tenant's documents (all of them when null) after {@code after} (from
   * the first when null), in the order of {@link #list}. Keyset paging: documents added or deleted
   * meanwhile never make a page repeat or skip one that was there all along.
   */
  public Future<Page> page(UUID tenantId, ListPosition after, Integer limit) {
    // One row more than asked tells whether another page follows.
    Integer fetch = limit == null ? null : limit + 1;
    return Database.inTenant(pool, tenantId, conn -> after == null
            ? conn.preparedQuery(Sql.LIST_DOCUMENTS_FIRST).execute(Tuple.of(tenantId, fetch))
            : conn.preparedQuery(Sql.LIST_DOCUMENTS_AFTER)
                .execute(Tuple.of(tenantId, after.createdAt(), after.id(), fetch)))
        .map(rows -> {
          List<DocumentSummary> out = new ArrayList<>(rows.size());
          rows.forEach(r -> out.add(summary(r)));
          if (limit == null || out.size() <= limit) {
            return new Page(out, null);
          }
          List<DocumentSummary> page = out.subList(0, limit);
          DocumentSummary last = page.get(limit - 1);
          return new Page(List.copyOf(page), new ListPosition(last.createdAt(), last.id()));
        });
  }

  public Future<Optional<DocumentSummary>> get(UUID tenantId, UUID documentId) {
    return one(Sql.GET_DOCUMENT, tenantId, documentId, DocumentStore::summary);
  }

  /** True when a document was deleted (with its items and chunks). */
  public Future<Boolean> delete(UUID tenantId, UUID documentId) {
    return Database.inTenant(pool, tenantId, conn -> conn.preparedQuery(Sql.DELETE_DOCUMENT)
            .execute(Tuple.of(tenantId, documentId)))
        .compose(rows -> {
          boolean deleted = rows.rowCount() > 0;
          if (!deleted || documentsFs == null) {
            return Future.succeededFuture(deleted);
          }
          // The cache is rebuilt on the next sync anyway: a failure here must not undo the delete.
          return documentsFs.deleted(tenantId, documentId).map(p -> true).otherwise(err -> {
            LOG.warn("deleted {} but syncing /documents of tenant {} failed: {}", documentId, tenantId,
                err.toString());
            return true;
          });
        });
  }

  /**
   * One chunk of a document, as a citation names it: {@code {chunk_id, document_id, item_range:
   * [start, end_exclusive], headings, page_numbers, doc_item_refs, labels, content}}. Empty when the
   * tenant has no such chunk in that document.
   */
  public Future<Optional<JsonObject>> chunk(UUID tenantId, UUID documentId, UUID chunkId) {
    return Database.inTenant(pool, tenantId, conn -> conn.preparedQuery(Sql.GET_CHUNK)
            .execute(Tuple.of(tenantId, documentId, chunkId)))
        .map(rows -> {
          if (rows.size() == 0) {
            return Optional.<JsonObject>empty();
          }
          Row r = rows.iterator().next();
          return Optional.of(new JsonObject()
              .put("chunk_id", r.getUUID("id").toString())
              .put("document_id", documentId.toString())
              .put("item_range", new JsonArray().add(r.getInteger("item_start")).add(r.getInteger("item_end")))
              .put("headings", new JsonArray(Arrays.asList(r.getArrayOfStrings("headings"))))
              .put("page_numbers", new JsonArray(Arrays.asList(r.getArrayOfIntegers("page_numbers"))))
              .put("doc_item_refs", new JsonArray(Arrays.asList(r.getArrayOfStrings("doc_item_refs"))))
              .put("labels", new JsonArray(Arrays.asList(r.getArrayOfStrings("labels"))))
              .put("content", r.getString("content")));
        });
  }

  /** Which of these ids are documents of the tenant (another tenant's are not, as missing ones). */
  public Future<Set<UUID>> existing(UUID tenantId, Collection<UUID> ids) {
    return Database.inTenant(pool, tenantId, conn -> conn.preparedQuery(EXISTING)
        .execute(Tuple.of(tenantId, (Object) ids.toArray(UUID[]::new)))).map(rows -> {
      Set<UUID> out = new HashSet<>();
      rows.forEach(r -> out.add(r.getUUID("id")));
      return out;
    });
  }

  private <T> Future<Optional<T>> one(String sql, UUID tenantId, UUID documentId, Function<Row, T> map) {
    return Database.inTenant(pool, tenantId, conn -> conn.preparedQuery(sql).execute(Tuple.of(tenantId, documentId)))
        .map((RowSet<Row> rows) -> rows.size() == 0
            ? Optional.<T>empty()
            : Optional.of(map.apply(rows.iterator().next())));
  }

  static DocumentSummary summary(Row r) {
    return new DocumentSummary(r.getUUID("id"), r.getString("title"), r.getString("uri"),
        r.getString("source_type"), r.getString("content_hash"), r.getLong("byte_size"),
        r.getInteger("item_count"), r.getInteger("chunk_count"), r.getInteger("version"),
        r.getOffsetDateTime("created_at"), r.getOffsetDateTime("updated_at"));
  }

  static DocItem item(Row r) {
    return new DocItem(r.getInteger("position"), r.getString("self_ref"), r.getString("label"),
        r.getString("text"), Arrays.asList(r.getArrayOfIntegers("page_numbers")),
        r.getInteger("heading_level"), r.getInteger("tree_depth"));
  }
}
