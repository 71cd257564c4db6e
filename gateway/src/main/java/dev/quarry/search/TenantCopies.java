package dev.quarry.search;

import dev.quarry.store.Database;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Cursor;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Copies of tenants' search data kept in memory, of several kinds (the BM25 postings,
 * {@link TermIndexes}; the vectors, {@link VectorIndexes}), within one budget of heap.
 *
 * <p>The database stays the one source of truth; a copy knows the version it was made at. Every
 * statement that writes a tenant's chunks or postings sets the tenant's {@code term_version} to a
 * fresh value (migrations V13 and V15); a search reads it with the query's terms (one short
 * statement) and uses a copy only when the copy has that very version; otherwise the database
 * answers as before and a new copy is asked for ({@link #refresh}). Copies are made in the
 * background from one REPEATABLE READ snapshot (rows read through a cursor, then the copy made off
 * the connection on the copies' own thread, a {@link Making step} at a time), one build of each
 * kind at once, at most {@link #MAX_BUILDS} in all, and no more often than every {@link #THROTTLE}
 * times the last build's duration, so a tenant that writes all the time costs the database a
 * bounded share of its time and simply keeps searching there. Every gateway replica keeps copies of
 * its own and checks them the same way.
 *
 * <p>Memory: a build first reads the copy's size from the database's statistics and reserves what
 * the build will hold at its peak ({@link Size#peak}) on top of what the tenant's current copy
 * holds; it evicts the copies used longest ago to make room, and a copy whose estimate alone
 * exceeds half the budget ({@link #TENANT_SHARE}), or whose build's peak exceeds all of it, is not
 * made at all (until its version moves).
 * Once made, a copy reserves what it reports ({@link Copy#bytes}). A budget of 0 turns the whole
 * thing off.
 */
final class TenantCopies {
  private static final Logger LOG = LoggerFactory.getLogger(TenantCopies.class);
  /** A copy is rebuilt at most once per this many times its last build's duration. */
  static final int THROTTLE = 4;
  /**
   * One copy takes at most this fraction of the budget (1/2), so that a single large tenant cannot
   * evict every other tenant's copies; a larger one is searched in the database.
   */
  static final int TENANT_SHARE = 2;
  /** Nor more often than this, whatever it took: a tenant without chunks builds nothing, quickly. */
  static final long MIN_INTERVAL_NANOS = 1_000_000_000L;
  /**
   * Builds under way at once in this gateway, over all tenants and kinds: each holds a connection
   * while it reads and a share of the machine while it builds, so many tenants rebuilding together
   * (after a restart, say) would slow every search; the rest are searched in the database meanwhile
   * and ask again later. Of each kind one at a time, so that slow builds (vector graphs) never hold
   * every place: after a restart every tenant's postings copy is made while graphs are built.
   */
  static final int MAX_BUILDS = 2;
  /**
   * A copy found too large is sized again only when a search reports another version, or, when the
   * search knows no version (it has no copy of the tenant at all), after this long: the size
   * statements aggregate over all of a large tenant's rows.
   */
  static final long TOO_LARGE_RETRY_NANOS = 300_000_000_000L;
  /** Rows per round trip of a cursor. */
  static final int FETCH = 5_000;

  /** What a copy is: made at one version, taking about so many bytes of heap. */
  interface Copy {
    long version();

    long bytes();
  }

  /** A copy's size before it is made: its version, its estimated bytes, and its build's peak. */
  record Size(long version, long estimate, long peak) {}

  /** One kind of copy: how to size it and how to read it, inside the build's snapshot. */
  interface Kind<C extends Copy> {
    /** The tenant's version and the copy's size, or null when the tenant has nothing to copy. */
    Future<Size> size(SqlConnection conn, UUID tenant);

    /**
     * Reads the rows (through {@link Snapshot#stream}, which hands them to the copies' thread);
     * the making makes the copy from them, off the connection, on that thread.
     */
    Future<Making<C>> read(Snapshot snapshot, UUID tenant, long version);
  }

  /**
   * How a copy is made from the rows its build took in, on the copies' thread, a step at a time:
   * between two steps the thread does the work other builds queued meanwhile, so that a graph of
   * 100,000 vectors (a minute's work) does not hold back a postings copy that takes a second, while
   * its tenant searches in the database.
   */
  @FunctionalInterface
  interface Making<C> {
    /** One step of the work: the copy once it is made, else null (another step follows). */
    C step();
  }

  /**
   * A build's view of the database: one connection in a REPEATABLE READ transaction, whose rows
   * are taken in on the copies' thread.
   */
  final class Snapshot {
    private final SqlConnection conn;

    private Snapshot(SqlConnection conn) {
      this.conn = conn;
    }

    /** Every row of a statement through a cursor, {@link #FETCH} at a time. */
    Future<Void> stream(String sql, UUID tenant, RowSink sink) {
      return stream(sql, tenant, FETCH, sink);
    }

    /**
     * Every row of a statement through a cursor, {@code fetch} rows a round trip: read on the
     * connection's event loop, taken in by {@code sink} on the copies' thread, a round at a time.
     */
    Future<Void> stream(String sql, UUID tenant, int fetch, RowSink sink) {
      return conn.prepare(sql).compose(ps -> {
        Cursor cursor = ps.cursor(Tuple.of(tenant));
        return readAll(cursor, fetch, sink).eventually(() -> cursor.close().eventually(ps::close));
      });
    }

    /** A round at a time ({@link #untilDone}: a million vectors are read in 2,000 rounds of 500). */
    private Future<Void> readAll(Cursor cursor, int fetch, RowSink sink) {
      return untilDone(() -> cursor.read(fetch).compose(rows -> onMaker(() -> {
        for (Row row : rows) {
          sink.accept(row);
        }
        return null;
      })).map(y -> cursor.hasMore() ? null : Boolean.TRUE)).mapEmpty();
    }
  }

  private record Key(Kind<?> kind, UUID tenant) {}

  /** One copy and its build state; the fields other than {@code copy} and {@code lastUsed} under {@code this}. */
  private static final class Entry {
    volatile Copy copy;
    volatile long lastUsed;
    boolean building;
    long heldBytes;
    long buildingBytes;
    long lastStart = Long.MIN_VALUE / 2;
    long lastDuration;
    /** The version found too large for the budget, so not tried again; -1 for none. */
    long tooLarge = -1;
    /** Its tenant is gone ({@link #forget}): a build under way keeps nothing. */
    boolean forgotten;
  }

  private final Pool pool;
  /**
   * Where this gateway's builds do their work: taking in the rows a cursor read, then making the
   * copy from them. Never an event loop (a postings copy of 100,000 chunks takes seconds to take in,
   * and stalled every other request of its loop meanwhile), and one thread, so that builds take at
   * most one core and leave the rest to searches; it ends when idle. Builds are not slowed further:
   * every tenant whose copies are not built yet searches in the database meanwhile, which costs the
   * machine more than the build (red team round 4, R4-4; BENCHMARKS.md has the runs, including
   * builds that gave way to searches, which kept the slow period going three times as long).
   */
  private final ThreadPoolExecutor maker;
  private final long budgetBytes;
  private final LongSupplier clock;
  private final Map<Key, Entry> entries = new ConcurrentHashMap<>();
  /** The builds under way (their futures never fail). */
  private final Set<Future<Void>> running = ConcurrentHashMap.newKeySet();
  /** Bytes of the copies held plus those being built. Guarded by {@code this}. */
  private long reserved;
  /**
   * The kinds of which a build is under way: one build of a kind at a time, so this is also the
   * builds under way. Guarded by {@code this}.
   */
  private final Set<Kind<?>> building = new HashSet<>();

  TenantCopies(Pool pool, long budgetBytes, LongSupplier clock) {
    if (budgetBytes < 0) {
      throw new IllegalArgumentException("search copies' budget must be >= 0 bytes, got " + budgetBytes);
    }
    this.pool = pool;
    this.maker = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
      Thread t = new Thread(r, "quarry-search-copies");
      t.setDaemon(true);
      return t;
    });
    maker.allowCoreThreadTimeOut(true);
    this.budgetBytes = budgetBytes;
    this.clock = clock;
  }

  boolean enabled() {
    return budgetBytes > 0;
  }

  /**
   * Completes when every build under way now has ended (a test's way to start from a quiet state:
   * searches start builds of every kind, which take places among {@link #MAX_BUILDS}).
   */
  Future<Void> settled() {
    return Future.join(new ArrayList<>(running)).mapEmpty();
  }

  /** Bytes reserved by the copies held and those being built. */
  synchronized long bytes() {
    return reserved;
  }

  /** Builds under way (at most {@link #MAX_BUILDS}). */
  synchronized int builds() {
    return building.size();
  }

  /** The tenant's copy of this kind, whatever its version, or null; counts as a use. */
  @SuppressWarnings("unchecked")
  <C extends Copy> C current(Kind<C> kind, UUID tenant) {
    Entry e = entries.get(new Key(kind, tenant));
    if (e == null) {
      return null;
    }
    e.lastUsed = clock.getAsLong();
    return (C) e.copy;
  }

  /**
   * Drops the tenant's copy of this kind and gives its bytes back at once, or, while one is being
   * built, when the build ends (which then keeps nothing): its tenant was deleted. Until evicted, a
   * deleted tenant's copies took budget from live tenants' (its searches are refused before they
   * reach a copy, so nothing else would ever drop them). A search of the tenant still under way
   * may ask for a copy again; its build finds no rows (they are deleted first) and makes none.
   */
  void forget(Kind<?> kind, UUID tenant) {
    Entry e = entries.remove(new Key(kind, tenant));
    if (e == null) {
      return;
    }
    synchronized (this) {
      e.forgotten = true;
      if (!e.building) {
        e.copy = null;
        reserved -= e.heldBytes;
        e.heldBytes = 0;
      }
    }
  }

  /** The tenants of which this gateway keeps anything: a copy, a build, or a copy's bookkeeping. */
  Set<UUID> tenants() {
    Set<UUID> out = new HashSet<>();
    entries.keySet().forEach(k -> out.add(k.tenant()));
    return out;
  }

  /**
   * Starts a build of the tenant's copy of this kind unless one is running, the copy already has
   * {@code seen} (the version a search just read; -1 when unknown), it was built too recently, it
   * did not fit at that version, another build of this kind is running, or {@link #MAX_BUILDS} are.
   * Returns the build, or null when none was started; the future never fails (a failed build leaves
   * the old copy, which searches will keep finding stale).
   */
  <C extends Copy> Future<Void> refresh(Kind<C> kind, UUID tenant, long seen) {
    if (!enabled()) {
      return null;
    }
    Entry e = entries.computeIfAbsent(new Key(kind, tenant), k -> new Entry());
    long now = clock.getAsLong();
    synchronized (this) {
      Copy held = e.copy;
      if (e.building || (held != null && held.version() == seen) || (seen >= 0 && e.tooLarge == seen)
          || (seen < 0 && e.tooLarge >= 0 && now - e.lastStart < TOO_LARGE_RETRY_NANOS)
          || now - e.lastStart < Math.max(MIN_INTERVAL_NANOS, THROTTLE * e.lastDuration)
          || building.size() >= MAX_BUILDS || building.contains(kind)) {
        return null;
      }
      building.add(kind);
      e.building = true;
      e.lastStart = now;
    }
    e.lastUsed = now;
    Promise<Void> done = Promise.promise();
    running.add(done.future());
    pool.getConnection()
        .compose(conn -> read(conn, kind, tenant, e).eventually(() -> conn.query("ROLLBACK").execute()
            .eventually(conn::close)))
        .compose(making -> making == null ? Future.succeededFuture(null) : made(making))
        .onComplete(result -> {
          synchronized (this) {
            building.remove(kind);
            e.building = false;
            e.lastDuration = clock.getAsLong() - e.lastStart;
            if (result.failed()) {
              LOG.warn("copy of a tenant's search data not built; the database searches it: {}",
                  result.cause().toString());
            }
            Copy copy = result.succeeded() && !e.forgotten ? result.result() : null;
            if (copy != null) {
              LOG.info("copy of a tenant's search data built: {}, {} bytes, {} ms", copy,
                  copy.bytes(), e.lastDuration / 1_000_000);
              e.copy = copy;
            }
            if (e.forgotten) {
              e.copy = null;
            }
            // What the entry holds now (the new copy, the old one, or none) is what stays reserved.
            long holds = e.copy == null ? 0 : e.copy.bytes();
            reserved += holds - e.heldBytes - e.buildingBytes;
            e.heldBytes = holds;
            e.buildingBytes = 0;
          }
          running.remove(done.future());
          done.complete();
        });
    return done.future();
  }

  /** Runs the making's steps on the copies' thread, each queued behind the work waiting there. */
  private <C> Future<C> made(Making<C> making) {
    return untilDone(() -> onMaker(making::step));
  }

  /**
   * Starts {@code step} again each time its future succeeds with null, until one succeeds with a
   * value (the result) or fails. One promise for all the steps: a future composed on the next step's,
   * step after step, completed every one of them at once, nested, when the last ended, and
   * overflowed the event loop's stack at a million vectors (2,000 cursor rounds; tens of thousands
   * of graph steps).
   */
  private static <T> Future<T> untilDone(Supplier<Future<T>> step) {
    Promise<T> done = Promise.promise();
    nextStep(step, done);
    return done.future();
  }

  private static <T> void nextStep(Supplier<Future<T>> step, Promise<T> done) {
    step.get().onComplete(result -> {
      if (result.failed()) {
        done.fail(result.cause());
      } else if (result.result() != null) {
        done.complete(result.result());
      } else {
        nextStep(step, done);
      }
    });
  }

  /**
   * Runs {@code work} on the copies' thread; the future completes on the caller's Vert.x
   * context when it has one (so a statement that follows is issued from there), else on that thread.
   */
  <T> Future<T> onMaker(Supplier<T> work) {
    Context context = Vertx.currentContext();
    Promise<T> done = Promise.promise();
    try {
      maker.execute(() -> {
        T result;
        try {
          result = work.get();
        } catch (Throwable ex) {
          // Any Error too (a StackOverflowError, a LinkageError from Lucene): a build left
          // incomplete would keep its entry building and its place among MAX_BUILDS for ever.
          complete(context, () -> done.fail(ex));
          return;
        }
        complete(context, () -> done.complete(result));
      });
    } catch (RuntimeException rejected) {
      done.fail(rejected);
    }
    return done.future();
  }

  private static void complete(Context context, Runnable completion) {
    if (context == null) {
      completion.run();
      return;
    }
    try {
      context.runOnContext(v -> completion.run());
    } catch (RejectedExecutionException closed) {
      // Vert.x closed while the work ran (the gateway stops): nothing that would follow can run
      // any more, the copies go with the process, and the copies' thread takes its next task.
      LOG.debug("search copy's work finished after Vert.x closed; dropped");
    }
  }

  /** The rows at the snapshot's version, or null when the copy does not fit (or there is none). */
  private <C extends Copy> Future<Making<C>> read(SqlConnection conn, Kind<C> kind, UUID tenant,
      Entry e) {
    return conn.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; " + Database.setTenant(tenant))
        .execute()
        .compose(x -> kind.size(conn, tenant))
        .compose(size -> size == null || !reserve(e, size)
            ? Future.succeededFuture(null)
            : kind.read(new Snapshot(conn), tenant, size.version()));
  }

  /**
   * Makes room for the build's peak, beside what the entry holds now, by evicting the copies used
   * longest ago (other than this entry's); false when it cannot fit at all. The entry's own copy goes
   * first when it is of another version than the one being built: versions only move forward, so no
   * search that starts from now on can use it. Kept beside the build's peak, it refused every rebuild
   * of a copy over a quarter of the budget whose peak is three times its size (vectors), and stayed,
   * stale, counted as used by every search of its tenant, evicting fresh copies of others instead.
   */
  private synchronized boolean reserve(Entry e, Size size) {
    Copy held = e.copy;
    if (held != null && held.version() != size.version()) {
      e.copy = null;
      reserved -= e.heldBytes;
      e.heldBytes = 0;
    }
    if (size.estimate() > budgetBytes / TENANT_SHARE || size.peak() > budgetBytes) {
      e.tooLarge = size.version();
      return false;
    }
    long needed = Math.max(size.peak(), size.estimate());
    while (reserved + needed > budgetBytes) {
      Entry victim = entries.values().stream()
          .filter(v -> v != e && !v.building && v.copy != null)
          .min(Comparator.comparingLong(v -> v.lastUsed)).orElse(null);
      if (victim == null) {
        return false;
      }
      victim.copy = null;
      reserved -= victim.heldBytes;
      victim.heldBytes = 0;
    }
    reserved += needed;
    e.buildingBytes = needed;
    return true;
  }

  /**
   * One kind of copy as search sees it: the tenant's copy and a refresh of it. {@link TermIndexes},
   * {@link VectorIndexes} and {@link ContextIndexes} are the three.
   */
  static class View<C extends Copy> {
    private final TenantCopies copies;
    private final Kind<C> kind;

    View(TenantCopies copies, Kind<C> kind) {
      this.copies = copies;
      this.kind = kind;
    }

    final boolean enabled() {
      return copies.enabled();
    }

    /** The tenant's copy, whatever its version, or null; counts as a use. */
    final C current(UUID tenant) {
      return copies.current(kind, tenant);
    }

    /** {@link TenantCopies#refresh} of this kind of the tenant's copy. */
    final Future<Void> refresh(UUID tenant, long seen) {
      return copies.refresh(kind, tenant, seen);
    }

    /**
     * Whether the tenant has a copy of this kind, of whatever version; when it has none, one is
     * asked for (a search then reads the version, to use the copies it finds).
     */
    final boolean heldOrAsked(UUID tenant) {
      if (!enabled()) {
        return false;
      }
      if (current(tenant) != null) {
        return true;
      }
      refresh(tenant, -1);
      return false;
    }

    /**
     * The tenant's copy if it is at {@code version}, the one a search just read; else null (the
     * database answers) and a copy at that version is asked for, unless the version is unknown (-1).
     */
    final C at(UUID tenant, long version) {
      if (!enabled()) {
        return null;
      }
      C held = current(tenant);
      if (held != null && held.version() == version) {
        return held;
      }
      if (version >= 0) {
        refresh(tenant, version);
      }
      return null;
    }

    /** {@link TenantCopies#forget} of this kind of the tenant's copy. */
    final void forget(UUID tenant) {
      copies.forget(kind, tenant);
    }

    /** {@link TenantCopies#tenants}: of every kind. */
    final Set<UUID> tenants() {
      return copies.tenants();
    }

    /** {@link TenantCopies#settled}. */
    final Future<Void> settled() {
      return copies.settled();
    }

    /** Bytes reserved by all the copies (of every kind) held and being built. */
    final long bytes() {
      return copies.bytes();
    }

    /** Builds under way, of every kind. */
    final int builds() {
      return copies.builds();
    }
  }

  /** Hands each row of a statement to {@code sink}. */
  interface RowSink {
    void accept(Row row);
  }
}
