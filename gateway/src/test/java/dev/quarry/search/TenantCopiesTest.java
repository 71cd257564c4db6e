package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.store.Database;
import dev.quarry.support.TestStack;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * {@link TenantCopies}' budget with a kind of copy whose size the test sets (red team, round 4): a
 * copy made at one version must be replaceable at the next one whenever the new copy alone fits.
 */
@DisplayName("Search copies' budget: a copy whose version moved is replaced, not kept beside its build")
class TenantCopiesTest {
  static final long BUDGET = 1_000_000;

  @AutoClose
  static final TestStack stack = TestStack.start();
  static final Pool pool = stack.pool();

  /** Copies of a size and at a version the test sets, made at once. */
  static final class Fixed implements TenantCopies.Kind<Fixed.Made> {
    record Made(long version, long bytes) implements TenantCopies.Copy {}

    volatile long version = 1;
    final long estimate;
    final long peak;
    /** Thrown by the making of a copy (on the copies' own thread), when set. */
    volatile Error fails;
    /** When set, the making of a copy counts this down, then waits for {@link #gate}. */
    volatile CountDownLatch making;
    volatile CompletableFuture<Void> gate;

    /** Copies of {@code estimate} bytes whose builds peak at {@code peak}. */
    Fixed(long estimate, long peak) {
      this.estimate = estimate;
      this.peak = peak;
    }

    /** Small copies: a thousandth of the budget. */
    Fixed() {
      this(1_000, 1_000);
    }

    @Override
    public Future<TenantCopies.Size> size(SqlConnection conn, UUID tenant) {
      return Future.succeededFuture(new TenantCopies.Size(version, estimate, peak));
    }

    @Override
    public Future<TenantCopies.Making<Made>> read(TenantCopies.Snapshot snapshot, UUID tenant, long v) {
      long bytes = estimate;
      Error error = fails;
      CountDownLatch in = making;
      CompletableFuture<Void> wait = gate;
      return Future.succeededFuture(() -> {
        if (in != null) {
          in.countDown();
          wait.join();
        }
        if (error != null) {
          throw error;
        }
        return new Made(v, bytes);
      });
    }
  }

  /**
   * A copy of a statement's rows, read through {@link TenantCopies.Snapshot#stream} as the real kinds read
   * theirs: records the threads its rows were taken in on and it was made on.
   */
  static final class Streamed implements TenantCopies.Kind<Streamed.Made> {
    record Made(long version, long bytes, long rows) implements TenantCopies.Copy {}

    static final String ROWS = "SELECT g FROM generate_series(1, 12345) g WHERE $1::uuid IS NOT NULL";
    /** Rows a cursor round. */
    final int fetch;
    final Set<String> rowThreads = ConcurrentHashMap.newKeySet();
    final Set<String> makeThreads = ConcurrentHashMap.newKeySet();
    final AtomicLong onEventLoop = new AtomicLong();

    Streamed(int fetch) {
      this.fetch = fetch;
    }

    Streamed() {
      this(TenantCopies.FETCH);
    }

    @Override
    public Future<TenantCopies.Size> size(SqlConnection conn, UUID tenant) {
      return Future.succeededFuture(new TenantCopies.Size(1, 1_000, 1_000));
    }

    @Override
    public Future<TenantCopies.Making<Made>> read(TenantCopies.Snapshot snapshot, UUID tenant, long v) {
      AtomicLong rows = new AtomicLong();
      AtomicLong sum = new AtomicLong();
      return snapshot.stream(ROWS, tenant, fetch, row -> {
        rowThreads.add(Thread.currentThread().getName());
        if (Context.isOnEventLoopThread()) {
          onEventLoop.incrementAndGet();
        }
        rows.incrementAndGet();
        sum.addAndGet(row.getInteger(0));
      }).map(y -> () -> {
        makeThreads.add(Thread.currentThread().getName());
        if (Context.isOnEventLoopThread()) {
          onEventLoop.incrementAndGet();
        }
        return new Made(v, 1_000, sum.get() == 12345L * 12346 / 2 ? rows.get() : -1);
      });
    }
  }

  /**
   * A copy made in many steps, which keeps stepping until {@link #until} is done or its last step
   * came: a slow build, such as a graph of many vectors.
   */
  static final class Stepped implements TenantCopies.Kind<Fixed.Made> {
    final CompletableFuture<Void> until = new CompletableFuture<>();
    final AtomicLong steps = new AtomicLong();
    final CountDownLatch stepping = new CountDownLatch(1);
    final long most;

    /** At most {@code most} steps, the copy made in the last. */
    Stepped(long most) {
      this.most = most;
    }

    Stepped() {
      this(1_000_000);
    }

    @Override
    public Future<TenantCopies.Size> size(SqlConnection conn, UUID tenant) {
      return Future.succeededFuture(new TenantCopies.Size(1, 1_000, 1_000));
    }

    @Override
    public Future<TenantCopies.Making<Fixed.Made>> read(TenantCopies.Snapshot snapshot, UUID tenant, long v) {
      return Future.succeededFuture(() -> {
        stepping.countDown();
        return steps.incrementAndGet() < most && !until.isDone() ? null : new Fixed.Made(v, 1_000);
      });
    }
  }

  @Test
  @DisplayName("a slow build of one kind does not hold back another kind's: the copies' one thread"
      + " makes the other copy between two steps of the slow one")
  void slowBuildLetsOthersThrough() throws Exception {
    TenantCopies copies = new TenantCopies(pool, BUDGET, System::nanoTime);
    Stepped slow = new Stepped();
    Fixed quick = new Fixed();
    UUID tenant = UUID.randomUUID();
    Future<Void> slowBuild = copies.refresh(slow, tenant, -1);
    assertThat(slowBuild).isNotNull();
    assertThat(slow.stepping.await(30, TimeUnit.SECONDS)).as("the slow copy is being made").isTrue();
    await(copies.refresh(quick, UUID.randomUUID(), -1));
    long stepsThen = slow.steps.get();
    assertThat(slowBuild.isComplete()).as("the quick copy made while the slow one was still being made")
        .isFalse();
    slow.until.complete(null);
    await(slowBuild);
    assertThat(copies.current(slow, tenant)).isNotNull();
    assertThat(stepsThen).isLessThan(1_000_000);
  }

  @Test
  @DisplayName("a copy made in 100,000 steps is built: the steps do not nest (a graph of a million"
      + " vectors takes tens of thousands)")
  void manyStepsEnd() throws Exception {
    TenantCopies copies = new TenantCopies(pool, BUDGET, System::nanoTime);
    Stepped many = new Stepped(100_000);
    UUID tenant = UUID.randomUUID();
    await(copies.refresh(many, tenant, -1));
    assertThat(copies.current(many, tenant)).as("made in its last step").isNotNull();
    assertThat(many.steps).hasValue(100_000);
  }

  @Test
  @DisplayName("one build of a kind at a time: a second tenant's build of the same kind waits, one of"
      + " another kind starts, one of a third waits for MAX_BUILDS; the count of builds follows")
  void oneBuildOfAKindAtATime() throws Exception {
    TenantCopies copies = new TenantCopies(pool, BUDGET, System::nanoTime);
    Fixed vectors = new Fixed();
    vectors.making = new CountDownLatch(1);
    vectors.gate = new CompletableFuture<>();
    Fixed postings = new Fixed();
    Future<Void> first = copies.refresh(vectors, UUID.randomUUID(), -1);
    assertThat(first).isNotNull();
    assertThat(vectors.making.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(copies.refresh(vectors, UUID.randomUUID(), -1)).as("same kind, another tenant").isNull();
    Future<Void> other = copies.refresh(postings, UUID.randomUUID(), -1);
    assertThat(other).as("another kind").isNotNull();
    assertThat(copies.builds()).isEqualTo(2);
    Fixed contexts = new Fixed();
    assertThat(copies.refresh(contexts, UUID.randomUUID(), -1)).as("a third kind: MAX_BUILDS are running")
        .isNull();
    // (The first one's making holds the copies' one thread, in one step, until the gate opens.)
    vectors.gate.complete(null);
    await(first);
    await(other);
    assertThat(copies.builds()).isZero();
    UUID next = UUID.randomUUID();
    await(copies.refresh(vectors, next, -1));
    assertThat(copies.current(vectors, next)).as("the kind's place is free again").isNotNull();
  }

  @Test
  @DisplayName("a build whose Vert.x closes while its copy is being made ends quietly: nothing escapes"
      + " the copies' thread, which takes the next work")
  void buildEndsWhenVertxCloses() throws Exception {
    Vertx other = Vertx.vertx();
    Pool otherPool = Database.pool(other, stack.db().config(), 2);
    TenantCopies copies = new TenantCopies(otherPool, BUDGET, System::nanoTime);
    Fixed kind = new Fixed();
    kind.making = new CountDownLatch(1);
    kind.gate = new CompletableFuture<>();
    List<Throwable> escaped = new CopyOnWriteArrayList<>();
    Thread.UncaughtExceptionHandler before = Thread.getDefaultUncaughtExceptionHandler();
    Thread.setDefaultUncaughtExceptionHandler((t, e) -> escaped.add(e));
    try {
      assertThat(copies.refresh(kind, UUID.randomUUID(), -1)).isNotNull();
      assertThat(kind.making.await(30, TimeUnit.SECONDS)).as("the copy is being made").isTrue();
      other.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      kind.gate.complete(null);
      // The copies' one thread runs the next work only once it is done with the copy (and whatever
      // that threw would have escaped by then).
      assertThat(copies.onMaker(() -> 42).toCompletionStage().toCompletableFuture()
          .get(30, TimeUnit.SECONDS)).isEqualTo(42);
    } finally {
      Thread.setDefaultUncaughtExceptionHandler(before);
    }
    assertThat(escaped).isEmpty();
  }

  @Test
  @DisplayName("a build started on an event loop takes its rows in and makes its copy on the copies'"
      + " own thread, never the event loop, in several cursor rounds")
  void buildsOffTheEventLoop() throws Exception {
    TenantCopies copies = new TenantCopies(pool, BUDGET, System::nanoTime);
    Streamed kind = new Streamed();
    UUID tenant = UUID.randomUUID();
    CompletableFuture<Void> started = new CompletableFuture<>();
    stack.vertx().runOnContext(v -> {
      Future<Void> build = copies.refresh(kind, tenant, -1);
      if (build == null) {
        started.completeExceptionally(new AssertionError("no build started"));
      } else {
        build.onComplete(done -> started.complete(null));
      }
    });
    started.get(60, TimeUnit.SECONDS);
    assertThat(copies.current(kind, tenant)).as("every row, each once, over %d-row rounds",
        TenantCopies.FETCH).extracting(Streamed.Made::rows).isEqualTo(12345L);
    assertThat(kind.onEventLoop).hasValue(0);
    assertThat(kind.rowThreads).isNotEmpty().allSatisfy(t -> assertThat(t).isEqualTo("quarry-search-copies"));
    assertThat(kind.makeThreads).containsExactly("quarry-search-copies");
  }

  @Test
  @DisplayName("a build read in 12,345 cursor rounds of one row takes every row in: the rounds do not"
      + " nest (a million vectors are read in 2,000 rounds)")
  void manyRoundsEnd() throws Exception {
    TenantCopies copies = new TenantCopies(pool, BUDGET, System::nanoTime);
    Streamed kind = new Streamed(1);
    UUID tenant = UUID.randomUUID();
    await(copies.refresh(kind, tenant, -1));
    assertThat(copies.current(kind, tenant)).isNotNull().extracting(Streamed.Made::rows).isEqualTo(12345L);
  }

  static void await(Future<Void> build) throws Exception {
    assertThat(build).as("a build starts").isNotNull();
    build.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  @Test
  @DisplayName("a vector-like copy (peak 3 x its size, size 0.3 x the budget) is rebuilt after a write")
  void staleCopyIsReplaced() throws Exception {
    AtomicLong clock = new AtomicLong();
    TenantCopies copies = new TenantCopies(pool, BUDGET, clock::get);
    // Under half the budget; the build's peak alone fits the budget.
    Fixed kind = new Fixed(300_000, 900_000);
    UUID tenant = UUID.randomUUID();

    await(copies.refresh(kind, tenant, -1));
    assertThat(copies.current(kind, tenant)).extracting(Fixed.Made::version).isEqualTo(1L);

    kind.version = 2; // a write: the copy at version 1 is never used again
    clock.addAndGet(TimeUnit.MINUTES.toNanos(1));
    await(copies.refresh(kind, tenant, 2));
    assertThat(copies.current(kind, tenant)).as("the copy after the write")
        .extracting(Fixed.Made::version).isEqualTo(2L);
    assertThat(copies.bytes()).isEqualTo(300_000);
  }

  @Test
  @DisplayName("a stale copy does not make another tenant's fresh copy go first")
  void staleCopyGoesBeforeFreshOnes() throws Exception {
    AtomicLong clock = new AtomicLong();
    TenantCopies copies = new TenantCopies(pool, BUDGET, clock::get);
    Fixed a = new Fixed(250_000, 750_000);
    Fixed b = new Fixed(250_000, 750_000);
    UUID tenant = UUID.randomUUID();
    await(copies.refresh(a, tenant, -1));
    clock.addAndGet(1);
    await(copies.refresh(b, tenant, -1));
    assertThat(copies.bytes()).isEqualTo(500_000);

    a.version = 2;
    clock.addAndGet(TimeUnit.MINUTES.toNanos(1));
    copies.current(b, tenant); // b used most recently...
    clock.addAndGet(1);
    copies.current(a, tenant); // ...then a search finds a's copy stale (it still counts as a use)
    await(copies.refresh(a, tenant, 2));
    assertThat(copies.current(a, tenant)).extracting(Fixed.Made::version).isEqualTo(2L);
    assertThat(copies.current(b, tenant)).as("b's copy, current, is kept: a's stale one made room")
        .isNotNull();
  }

  @Test
  @DisplayName("a build whose making throws an Error (not an OOM) ends, and gives its place back")
  void errorEndsTheBuild() throws Exception {
    AtomicLong clock = new AtomicLong();
    TenantCopies copies = new TenantCopies(pool, BUDGET, clock::get);
    Fixed failing = new Fixed();
    failing.fails = new StackOverflowError("graph too deep");
    for (int i = 0; i < TenantCopies.MAX_BUILDS; i++) {
      await(copies.refresh(failing, UUID.randomUUID(), -1));
    }
    Fixed fine = new Fixed();
    UUID tenant = UUID.randomUUID();
    await(copies.refresh(fine, tenant, -1));
    assertThat(copies.current(fine, tenant)).as("built once the failed builds gave their places back")
        .isNotNull();
    assertThat(copies.bytes()).isEqualTo(1_000);
  }

  @Test
  @DisplayName("a deleted tenant's copy is forgotten: its bytes go back at once; one being built keeps"
      + " nothing when its build ends; other tenants' copies stay")
  void forgetGivesTheBytesBack() throws Exception {
    TenantCopies copies = new TenantCopies(pool, BUDGET, System::nanoTime);
    Fixed kind = new Fixed(100_000, 100_000);
    UUID gone = UUID.randomUUID();
    UUID stays = UUID.randomUUID();
    await(copies.refresh(kind, gone, -1));
    await(copies.refresh(kind, stays, -1));
    assertThat(copies.bytes()).isEqualTo(200_000);

    copies.forget(kind, gone);
    assertThat(copies.current(kind, gone)).isNull();
    assertThat(copies.current(kind, stays)).isNotNull();
    assertThat(copies.bytes()).isEqualTo(100_000);

    UUID building = UUID.randomUUID();
    kind.making = new CountDownLatch(1);
    kind.gate = new CompletableFuture<>();
    Future<Void> build = copies.refresh(kind, building, -1);
    assertThat(build).isNotNull();
    assertThat(kind.making.await(30, TimeUnit.SECONDS)).isTrue();
    copies.forget(kind, building);
    assertThat(copies.bytes()).as("the build's reservation is held until it ends").isEqualTo(200_000);
    kind.gate.complete(null);
    await(build);
    assertThat(copies.current(kind, building)).as("the build kept nothing").isNull();
    assertThat(copies.bytes()).isEqualTo(100_000);
    assertThat(copies.builds()).isZero();
  }
}
