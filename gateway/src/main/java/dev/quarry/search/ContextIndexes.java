package dev.quarry.search;

import io.vertx.core.Future;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.UUID;

/**
 * The tenants' hit contexts kept in memory ({@link ContextIndex}), among the search copies of
 * {@link TenantCopies}, which says when a copy is used, built and evicted. A build reads the
 * documents, the items in order and the chunks through cursors; the size it reserves comes from the
 * text's UTF-8 length and the number of rows.
 */
final class ContextIndexes extends TenantCopies.View<ContextIndex> {
  private static final String SIZE = "SELECT s.term_version, c.n AS chunks, c.bytes AS chunk_bytes,"
      + " i.n AS items, i.bytes AS item_bytes, d.n AS documents, d.bytes AS document_bytes"
      + " FROM corpus_stats s,"
      + " LATERAL (SELECT count(*) AS n, coalesce(sum(octet_length(content)"
      + "   + octet_length(array_to_string(headings, '')) + octet_length(array_to_string(doc_item_refs, ''))"
      + "   + octet_length(array_to_string(labels, '')) + 4 * cardinality(page_numbers)), 0) AS bytes"
      + "   FROM chunks WHERE tenant_id = $1) c,"
      + " LATERAL (SELECT count(*) AS n, coalesce(sum(octet_length(text) + octet_length(self_ref)"
      + "   + octet_length(label) + 4 * cardinality(page_numbers)), 0) AS bytes"
      + "   FROM items WHERE tenant_id = $1) i,"
      + " LATERAL (SELECT count(*) AS n, coalesce(sum(octet_length(title) + octet_length(uri)), 0) AS bytes"
      + "   FROM documents WHERE tenant_id = $1) d"
      + " WHERE s.tenant_id = $1";
  private static final String DOCUMENTS = "SELECT id, title, uri FROM documents WHERE tenant_id = $1";
  private static final String ITEMS = "SELECT document_id, position, self_ref, label, text, page_numbers,"
      + " section_start, section_end FROM items WHERE tenant_id = $1 ORDER BY document_id, position";
  private static final String CHUNKS = "SELECT id, document_id, item_start, item_end, headings, content,"
      + " page_numbers, doc_item_refs, labels FROM chunks WHERE tenant_id = $1";

  static final TenantCopies.Kind<ContextIndex> KIND = new TenantCopies.Kind<>() {
    @Override
    public Future<TenantCopies.Size> size(SqlConnection conn, UUID tenant) {
      return conn.preparedQuery(SIZE).execute(Tuple.of(tenant)).map(rows -> {
        if (rows.size() == 0) {
          return null;
        }
        Row r = rows.iterator().next();
        long estimate = ContextIndex.estimateBytes(r.getLong("chunks"), r.getLong("items"),
            r.getLong("documents"),
            r.getLong("chunk_bytes") + r.getLong("item_bytes") + r.getLong("document_bytes"));
        return new TenantCopies.Size(r.getLong("term_version"), estimate, estimate);
      });
    }

    @Override
    public Future<TenantCopies.Making<ContextIndex>> read(TenantCopies.Snapshot snapshot, UUID tenant, long version) {
      ContextIndex.Builder builder = new ContextIndex.Builder(version);
      return snapshot.stream(DOCUMENTS, tenant,
              row -> builder.document(row.getUUID(0), row.getString(1), row.getString(2)))
          .compose(y -> snapshot.stream(ITEMS, tenant, row -> builder.item(row.getUUID(0),
              row.getInteger(1), row.getString(2), row.getString(3), row.getString(4),
              row.getArrayOfIntegers(5), row.getInteger(6), row.getInteger(7))))
          .compose(y -> snapshot.stream(CHUNKS, tenant, row -> builder.chunk(row.getUUID(0),
              row.getUUID(1), row.getInteger(2), row.getInteger(3), row.getArrayOfStrings(4),
              row.getString(5), row.getArrayOfIntegers(6), row.getArrayOfStrings(7),
              row.getArrayOfStrings(8))))
          .map(y -> builder::build);
    }

    @Override
    public String toString() {
      return "hit contexts";
    }
  };

  ContextIndexes(TenantCopies copies) {
    super(copies, KIND);
  }
}
