package dev.quarry.search;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.UUID;
import java.util.function.LongSupplier;

/**
 * The tenants' BM25 postings kept in memory ({@link TermIndex}), among the search copies of
 * {@link TenantCopies}, which says when a copy is used, built and evicted. A build reads the chunks,
 * then the postings in order, through cursors; the size it reserves comes from the term
 * statistics, the terms' own bytes included ({@link TermIndex#estimateBytes}).
 */
final class TermIndexes extends TenantCopies.View<TermIndex> {
  private static final String SIZE = "SELECT s.term_version, s.chunk_count, t.postings, t.terms,"
      + " t.term_bytes, (SELECT count(*) FROM documents WHERE tenant_id = $1) AS documents"
      + " FROM corpus_stats s, LATERAL (SELECT coalesce(sum(df), 0) AS postings, count(*) AS terms,"
      + " coalesce(sum(octet_length(term)), 0) AS term_bytes"
      + " FROM term_stats WHERE tenant_id = $1 AND df > 0) t WHERE s.tenant_id = $1";
  private static final String CHUNKS =
      "SELECT id, document_id, token_count FROM chunks WHERE tenant_id = $1 ORDER BY id";
  private static final String POSTINGS =
      "SELECT term, chunk_id, tf FROM chunk_terms WHERE tenant_id = $1 ORDER BY term, chunk_id";

  /** The one kind of copy this is; stateless, so every {@link TenantCopies} can share it. */
  static final TenantCopies.Kind<TermIndex> KIND = new TenantCopies.Kind<>() {
    @Override
    public Future<TenantCopies.Size> size(SqlConnection conn, UUID tenant) {
      return conn.preparedQuery(SIZE).execute(Tuple.of(tenant)).map(rows -> {
        if (rows.size() == 0) {
          return null;
        }
        Row r = rows.iterator().next();
        long estimate = TermIndex.estimateBytes(r.getLong("chunk_count"), r.getLong("postings"),
            r.getLong("terms"), r.getLong("term_bytes"), r.getLong("documents"));
        return new TenantCopies.Size(r.getLong("term_version"), estimate, estimate);
      });
    }

    @Override
    public Future<TenantCopies.Making<TermIndex>> read(TenantCopies.Snapshot snapshot, UUID tenant, long version) {
      TermIndex.Builder builder = new TermIndex.Builder(version);
      return snapshot.stream(CHUNKS, tenant,
              row -> builder.chunk(row.getUUID(0), row.getUUID(1), row.getInteger(2)))
          .compose(y -> snapshot.stream(POSTINGS, tenant,
              row -> builder.posting(row.getString(0), row.getUUID(1), row.getInteger(2))))
          .map(y -> builder::build);
    }

    @Override
    public String toString() {
      return "BM25 postings";
    }
  };

  TermIndexes(Pool pool, long budgetBytes) {
    this(pool, budgetBytes, System::nanoTime);
  }

  /** With copies of their own (a test's budget and clock). */
  TermIndexes(Pool pool, long budgetBytes, LongSupplier clock) {
    this(new TenantCopies(pool, budgetBytes, clock));
  }

  TermIndexes(TenantCopies copies) {
    super(copies, KIND);
  }
}
