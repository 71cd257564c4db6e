package dev.quarry.search;

import io.vertx.core.Future;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.UUID;

/**
 * The tenants' chunk vectors kept in memory ({@link VectorIndex}), among the search copies of
 * {@link TenantCopies}, which says when a copy is used, built and evicted. A copy holds the chunks
 * embedded by this gateway's model only, as the database's vector ranking does; a build reads them
 * through a cursor and makes the graph on the copies' own thread.
 */
final class VectorIndexes extends TenantCopies.View<VectorIndex> {
  /** Rows of vectors per round trip of a build's cursor. */
  static final int VECTOR_FETCH = 500;

  VectorIndexes(TenantCopies copies, String modelName, int dimensions) {
    super(copies, new Kind(modelName, dimensions));
  }

  private static final class Kind implements TenantCopies.Kind<VectorIndex> {
    private final int dimensions;
    private final String size;
    private final String rows;

    Kind(String modelName, int dimensions) {
      // The model name is checked by SearchSql (a pattern without quotes) before it gets here.
      String mine = "tenant_id = $1 AND embedding_model = '" + modelName + "' AND embedding IS NOT NULL";
      this.dimensions = dimensions;
      this.size = "SELECT s.term_version, (SELECT count(*) FROM chunks WHERE " + mine + ") AS chunks,"
          + " (SELECT count(*) FROM documents WHERE tenant_id = $1) AS documents"
          + " FROM corpus_stats s WHERE s.tenant_id = $1";
      this.rows = "SELECT id, document_id, embedding::vector(" + dimensions + ")::real[] FROM chunks"
          + " WHERE " + mine + " ORDER BY id";
    }

    @Override
    public Future<TenantCopies.Size> size(SqlConnection conn, UUID tenant) {
      return conn.preparedQuery(size).execute(Tuple.of(tenant)).map(result -> {
        if (result.size() == 0) {
          return null;
        }
        Row r = result.iterator().next();
        long chunks = r.getLong("chunks");
        long documents = r.getLong("documents");
        return new TenantCopies.Size(r.getLong("term_version"),
            VectorIndex.estimateBytes(chunks, dimensions, documents),
            VectorIndex.peakBytes(chunks, dimensions, documents));
      });
    }

    @Override
    public Future<TenantCopies.Making<VectorIndex>> read(TenantCopies.Snapshot snapshot, UUID tenant, long version) {
      VectorIndex.Builder builder = new VectorIndex.Builder(version, dimensions);
      // 500 rows a round: the client decodes a vector as 384 boxed floats (~7.7 KB a row), so a
      // round of the usual 5,000 held ~38 MB outside the budget (red team round 4, R4-3).
      return snapshot.stream(rows, tenant, VECTOR_FETCH, row -> {
        Float[] boxed = row.getArrayOfFloats(2);
        float[] vector = new float[boxed.length];
        for (int i = 0; i < boxed.length; i++) {
          vector[i] = boxed[i] == null ? Float.NaN : boxed[i];
        }
        builder.chunk(row.getUUID(0), row.getUUID(1), vector);
      }).map(y -> builder::step);
    }

    @Override
    public String toString() {
      return "vectors of " + dimensions + " dimensions";
    }
  }
}
