package dev.quarry.search;

import dev.quarry.store.Database;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.sqlclient.Cursor;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.Comparator;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tenants' BM25 postings kept in memory ({@link TermIndex}), within a budget of heap.
 *
 * <p>The database stays the one source of truth; this is a copy that knows its version. A search
 * reads the tenant's current {@code term_version} with the query's terms (one short statement) and
 * ranks in memory only when the copy here has that very version; otherwise it ranks in the database
 * as before and asks for a new copy ({@link #refresh}). Copies are built in the background from one
 * REPEATABLE READ snapshot (the chunks, then the postings in order, through a cursor), one at a time
 * per tenant, and no more often than every {@link #THROTTLE} times the last build's duration, so a
 * tenant that writes all the time costs the database a bounded share of its time and simply keeps
 * searching there. Every gateway replica keeps copies of its own and checks them the same way.
 *
 * <p>Memory: a build first reads the index's size from the term statistics and reserves its
 * estimate ({@link TermIndex#estimateBytes}); it evicts the copies used longest ago to make room, and
 * a tenant whose index alone exceeds half the budget ({@link #TENANT_SHARE}) is not copied at all
 * (until its version moves). At most {@link #MAX_BUILDS} builds run at once. A budget of 0 turns
 * the whole thing off.
 */
final class TermIndexes {
  private static final Logger LOG = LoggerFactory.getLogger(TermIndexes.class);
  /** A tenant's copy is rebuilt at most once per this many times its last build's duration. */
  static final int THROTTLE = 4;
  /**
   * One tenant's copy takes at most this fraction of the budget (1/2), so that a single large
   * tenant cannot evict every other tenant's copy; a larger one is ranked in the database.
   */
  static final int TENANT_SHARE = 2;
  /** Nor more often than this, whatever it took: a tenant without chunks builds nothing, quickly. */
  static final long MIN_INTERVAL_NANOS = 1_000_000_000L;
  /** Rows per round trip of the postings cursor; a round's rows are indexed on the event loop. */
  static final int FETCH = 5_000;

  /**
   * Builds under way at once in this gateway, over all tenants: each holds a connection and a share
   * of the event loop for its whole length, so many tenants rebuilding together (after a restart,
   * say) would slow every search; the rest rank in the database meanwhile and ask again later.
   */
  static final int MAX_BUILDS = 2;

  private static final String SIZE = "SELECT s.term_version, s.chunk_count, t.postings, t.terms,"
      + " t.term_bytes, (SELECT count(*) FROM documents WHERE tenant_id = $1) AS documents"
      + " FROM corpus_stats s, LATERAL (SELECT coalesce(sum(df), 0) AS postings, count(*) AS terms,"
      + " coalesce(sum(octet_length(term)), 0) AS term_bytes"
      + " FROM term_stats WHERE tenant_id = $1 AND df > 0) t WHERE s.tenant_id = $1";
  private static final String CHUNKS =
      "SELECT id, document_id, token_count FROM chunks WHERE tenant_id = $1 ORDER BY id";
  private static final String POSTINGS =
      "SELECT term, chunk_id, tf FROM chunk_terms WHERE tenant_id = $1 ORDER BY term, chunk_id";

  private final Pool pool;
  private final long budgetBytes;
  private final LongSupplier clock;
  private final Map<UUID, Entry> entries = new ConcurrentHashMap<>();
  /** Bytes of the copies held plus those being built. Guarded by {@code this}. */
  private long reserved;
  /** Builds under way. Guarded by {@code this}. */
  private int building;

  /** One tenant's copy and its build state; the fields other than {@code index} under {@code this}. */
  private static final class Entry {
    volatile TermIndex index;
    volatile long lastUsed;
    boolean building;
    long reservedBytes;
    long lastStart = Long.MIN_VALUE / 2;
    long lastDuration;
    /** The version found too large for the budget, so not tried again; -1 for none. */
    long tooLarge = -1;
  }

  TermIndexes(Pool pool, long budgetBytes) {
    this(pool, budgetBytes, System::nanoTime);
  }

  TermIndexes(Pool pool, long budgetBytes, LongSupplier clock) {
    if (budgetBytes < 0) {
      throw new IllegalArgumentException("term index budget must be >= 0 bytes, got " + budgetBytes);
    }
    this.pool = pool;
    this.budgetBytes = budgetBytes;
    this.clock = clock;
  }

  boolean enabled() {
    return budgetBytes > 0;
  }

  /** The tenant's copy, whatever its version, or null; counts as a use. */
  TermIndex current(UUID tenant) {
    Entry e = entries.get(tenant);
    if (e == null) {
      return null;
    }
    e.lastUsed = clock.getAsLong();
    return e.index;
  }

  /** Bytes reserved by the copies held and those being built. */
  synchronized long bytes() {
    return reserved;
  }


  /**
   * Starts a build of the tenant's copy unless one is running, the copy already has {@code seen}
   * (the version a search just read; -1 when unknown), the tenant was built too recently, or its
   * index did not fit at that version. Returns the build, or null when none was started; the future
   * never fails (a failed build leaves the old copy, which searches will keep finding stale).
   */
  Future<Void> refresh(UUID tenant, long seen) {
    if (!enabled()) {
      return null;
    }
    Entry e = entries.computeIfAbsent(tenant, t -> new Entry());
    long now = clock.getAsLong();
    synchronized (this) {
      TermIndex held = e.index;
      if (e.building || (held != null && held.version == seen) || (seen >= 0 && e.tooLarge == seen)
          || now - e.lastStart < Math.max(MIN_INTERVAL_NANOS, THROTTLE * e.lastDuration)
          || building >= MAX_BUILDS) {
        return null;
      }
      building++;
      e.building = true;
      e.lastStart = now;
    }
    e.lastUsed = now;
    Promise<Void> done = Promise.promise();
    pool.getConnection()
        .compose(conn -> build(conn, tenant, e).eventually(() -> conn.query("ROLLBACK").execute()
            .eventually(conn::close)))
        .onComplete(result -> {
          synchronized (this) {
            building--;
            e.building = false;
            e.lastDuration = clock.getAsLong() - e.lastStart;
            if (result.failed()) {
              LOG.warn("copy of a tenant's postings not built; the database ranks its searches: {}",
                  result.cause().toString());
            }
            if (result.succeeded() && result.result() != null) {
              TermIndex index = result.result();
              LOG.info("copy of a tenant's postings built: version {}, {} chunks, {} postings, {} terms,"
                  + " {} bytes, {} ms", index.version, index.chunks(), index.postings(), index.terms(),
                  index.bytes(), e.lastDuration / 1_000_000);
              e.index = index;
            }
            // What the entry holds now (the new copy, the old one, or none) is what stays reserved.
            long holds = e.index == null ? 0 : e.index.bytes();
            reserved += holds - e.reservedBytes;
            e.reservedBytes = holds;
          }
          done.complete();
        });
    return done.future();
  }

  /** The copy at the snapshot's version, or null when it does not fit (or the tenant has none). */
  private Future<TermIndex> build(SqlConnection conn, UUID tenant, Entry e) {
    return conn.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; " + Database.setTenant(tenant))
        .execute()
        .compose(x -> conn.preparedQuery(SIZE).execute(Tuple.of(tenant)))
        .compose(size -> {
          if (size.size() == 0) {
            return Future.succeededFuture(null);
          }
          Row r = size.iterator().next();
          long version = r.getLong("term_version");
          long estimate = TermIndex.estimateBytes(r.getLong("chunk_count"), r.getLong("postings"),
              r.getLong("terms"), r.getLong("term_bytes"), r.getLong("documents"));
          if (!reserve(e, version, estimate)) {
            return Future.succeededFuture(null);
          }
          TermIndex.Builder builder = new TermIndex.Builder(version);
          return stream(conn, CHUNKS, tenant, row -> builder.chunk(row.getUUID(0), row.getUUID(1), row.getInteger(2)))
              .compose(y -> stream(conn, POSTINGS, tenant,
                  row -> builder.posting(row.getString(0), row.getUUID(1), row.getInteger(2))))
              .map(y -> builder.build());
        });
  }

  /**
   * Makes room for {@code estimate} bytes (more than the entry holds now) by evicting the copies
   * used longest ago, other than this tenant's; false when it cannot fit at all.
   */
  private synchronized boolean reserve(Entry e, long version, long estimate) {
    if (estimate > budgetBytes / TENANT_SHARE) {
      e.tooLarge = version;
      return false;
    }
    long needed = estimate - e.reservedBytes;
    while (reserved + needed > budgetBytes) {
      Entry victim = entries.values().stream()
          .filter(v -> v != e && !v.building && v.index != null)
          .min(Comparator.comparingLong(v -> v.lastUsed)).orElse(null);
      if (victim == null) {
        return false;
      }
      victim.index = null;
      reserved -= victim.reservedBytes;
      victim.reservedBytes = 0;
    }
    reserved += needed;
    e.reservedBytes = estimate;
    return true;
  }

  private interface RowSink {
    void accept(Row row);
  }

  /** Every row of a statement through a cursor, {@link #FETCH} at a time. */
  private static Future<Void> stream(SqlConnection conn, String sql, UUID tenant, RowSink sink) {
    return conn.prepare(sql).compose(ps -> {
      Cursor cursor = ps.cursor(Tuple.of(tenant));
      return readAll(cursor, sink).eventually(() -> cursor.close().eventually(ps::close));
    });
  }

  private static Future<Void> readAll(Cursor cursor, RowSink sink) {
    return cursor.read(FETCH).compose(rows -> {
      for (Row row : rows) {
        sink.accept(row);
      }
      return cursor.hasMore() ? readAll(cursor, sink) : Future.succeededFuture();
    });
  }
}
