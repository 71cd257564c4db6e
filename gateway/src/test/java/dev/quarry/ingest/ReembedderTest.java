package dev.quarry.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.quarry.ingest.Reembedder.Status;
import dev.quarry.ingest.ReembedderFixture.Inserted;
import dev.quarry.ingest.ReembedderFixture.Stored;
import dev.quarry.search.Embedder;
import dev.quarry.search.OnnxEmbedder;
import dev.quarry.search.RankedChunk;
import dev.quarry.search.SearchMode;
import dev.quarry.search.SearchService;
import dev.quarry.store.Database;
import dev.quarry.support.DelegatingEmbedder;
import dev.quarry.support.TestDatabase;
import dev.quarry.tenancy.Tenants;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@DisplayName("Re-embedding: chunks recorded under another model are brought to the configured one")
class ReembedderTest {
  private static final int BATCH = 16;
  private static final int STALE_A = 41;
  private static final int STALE_B = 23;
  private static final int CURRENT = 5;

  static TestDatabase db;
  static Vertx vertx;
  static Pool pool;
  static Embedder embedder;
  static SearchService search;
  static Connection jdbc;
  Inserted corpus;

  @BeforeAll
  static void setUp() throws Exception {
    db = TestDatabase.create();
    embedder = new OnnxEmbedder();
    vertx = Vertx.vertx();
    pool = Database.pool(vertx, db.config());
    search = new SearchService(vertx, pool, embedder, db.config());
    db.prepare(vertx, search);
    jdbc = db.jdbc();
  }

  @AfterAll
  static void tearDown() throws Exception {
    if (jdbc != null) {
      jdbc.close();
    }
    if (pool != null) {
      pool.close().await();
    }
    if (vertx != null) {
      vertx.close().await();
    }
    if (db != null) {
      db.close();
    }
  }

  @BeforeEach
  void insertStaleChunks() throws Exception {
    ReembedderFixture.clear(jdbc);
    corpus = ReembedderFixture.insert(jdbc, embedder, Tenants.DEFAULT, STALE_A, STALE_B, CURRENT);
  }

  private Reembedder reembedder(Embedder e) {
    return new Reembedder(vertx, pool, e, BATCH, Duration.ofMillis(1));
  }

  @Test
  @DisplayName("every chunk of every tenant ends up under the configured model, with the vector that model gives for its content")
  void reembedsEveryStaleChunk() throws Exception {
    Map<UUID, Stored> before = ReembedderFixture.chunks(jdbc);

    Status status = reembedder(embedder).run().await();

    assertThat(status.state()).isEqualTo(Status.State.DONE);
    assertThat(status.total()).isEqualTo(STALE_A + STALE_B);
    assertThat(status.done()).isEqualTo(STALE_A + STALE_B);
    assertThat(status.model()).isEqualTo(OnnxEmbedder.DEFAULT);
    Map<UUID, Stored> after = ReembedderFixture.chunks(jdbc);
    assertThat(after).hasSize(STALE_A + STALE_B + CURRENT);
    List<UUID> ids = new ArrayList<>(after.keySet());
    List<String> contents = ids.stream().map(id -> after.get(id).content()).toList();
    List<float[]> expected = embedder.embedPassages(contents);
    for (int i = 0; i < ids.size(); i++) {
      Stored s = after.get(ids.get(i));
      assertThat(s.model()).as("model of chunk %s", ids.get(i)).isEqualTo(OnnxEmbedder.DEFAULT);
      assertThat(s.vector()).as("vector of chunk %s", ids.get(i)).hasSize(384);
      for (int d = 0; d < 384; d++) {
        assertThat(s.vector()[d]).as("dimension %d of chunk %s", d, ids.get(i))
            .isCloseTo(expected.get(i)[d], within(1e-5f));
      }
      assertThat(s.content()).isEqualTo(before.get(ids.get(i)).content());
    }
    for (UUID id : corpus.current()) {
      assertThat(after.get(id).xmin()).as("chunk %s already had the model: not rewritten", id)
          .isEqualTo(before.get(id).xmin());
    }
  }

  @Test
  @DisplayName("two replicas re-embedding at once share the work: each chunk is embedded once, by one of them")
  void replicasShareTheWork() throws Exception {
    AtomicInteger embedded = new AtomicInteger();
    // Slow enough that the two runs overlap batch for batch, as two replicas starting together do.
    Embedder counting = new DelegatingEmbedder(embedder) {
      @Override
      public List<float[]> embedPassages(List<String> texts) {
        embedded.addAndGet(texts.size());
        java.util.concurrent.locks.LockSupport.parkNanos(java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(50));
        return super.embedPassages(texts);
      }
    };
    Pool other = Database.pool(vertx, db.config(), 4);
    try {
      Reembedder first = reembedder(counting);
      Reembedder second = new Reembedder(vertx, other, counting, BATCH, Duration.ofMillis(1));
      Future<Status> a = first.run();
      Future<Status> b = second.run();
      Status sa = a.await();
      Status sb = b.await();
      assertThat(List.of(sa.state(), sb.state())).containsOnly(Status.State.DONE);
      assertThat(embedded.get()).as("passages embedded by the two together").isEqualTo(STALE_A + STALE_B);
      assertThat(sa.done() + sb.done()).isEqualTo(STALE_A + STALE_B);
      assertThat(sa.done()).as("the first run's share").isPositive();
      assertThat(sb.done()).as("the second run's share").isPositive();
      assertThat(ReembedderFixture.count(jdbc, "SELECT count(*) FROM chunks WHERE embedding_model <> '"
          + embedder.modelName() + "'")).isZero();
    } finally {
      other.close().await();
    }
  }

  @Test
  @DisplayName("the BM25 side is not touched: chunk_terms rows keep their row versions, token counts and corpus statistics their values; the search version moves, since the vectors did")
  void leavesTheTermIndexAlone() throws Exception {
    Map<String, String> termsBefore = ReembedderFixture.termRows(jdbc);
    Map<String, String> statsBefore = ReembedderFixture.corpusStats(jdbc);
    Map<String, Long> versionsBefore = ReembedderFixture.versions(jdbc);
    long tokensBefore = ReembedderFixture.count(jdbc, "SELECT sum(token_count) FROM chunks");
    assertThat(termsBefore).hasSizeGreaterThan(STALE_A + STALE_B);
    assertThat(statsBefore).hasSize(2);

    assertThat(reembedder(embedder).run().await().state()).isEqualTo(Status.State.DONE);

    // The same rows with the same values and the same xmin, i.e. never rewritten.
    assertThat(rewritten(termsBefore, ReembedderFixture.termRows(jdbc)))
        .as("chunk_terms rows rewritten, changed or gone").isZero();
    assertThat(ReembedderFixture.termRows(jdbc)).hasSameSizeAs(termsBefore);
    assertThat(ReembedderFixture.corpusStats(jdbc)).isEqualTo(statsBefore);
    // Every tenant had stale chunks re-embedded, so every tenant's copies of its vectors are stale.
    Map<String, Long> versionsAfter = ReembedderFixture.versions(jdbc);
    assertThat(versionsAfter).hasSameSizeAs(versionsBefore);
    versionsBefore.forEach((t, v) -> assertThat(versionsAfter.get(t)).as("version of %s", t).isNotEqualTo(v));
    assertThat(ReembedderFixture.count(jdbc, "SELECT sum(token_count) FROM chunks"))
        .isEqualTo(tokensBefore);
  }

  @Test
  @DisplayName("a changed content still re-indexes its terms and lengths; the same content written again does not")
  void contentChangesStillReindex() throws Exception {
    UUID chunk = corpus.stale().get(3);
    Map<String, String> termsBefore = ReembedderFixture.termRows(jdbc);
    try (Statement s = jdbc.createStatement()) {
      s.executeUpdate("UPDATE chunks SET content = content WHERE id = '" + chunk + "'");
    }
    assertThat(rewritten(termsBefore, ReembedderFixture.termRows(jdbc)))
        .as("chunk_terms rows rewritten by an update that kept the content").isZero();

    long totalBefore = ReembedderFixture.count(jdbc,
        "SELECT total_tokens FROM corpus_stats WHERE tenant_id = '" + Tenants.DEFAULT + "'");
    long lengthBefore = ReembedderFixture.count(jdbc,
        "SELECT token_count FROM chunks WHERE id = '" + chunk + "'");
    try (Statement s = jdbc.createStatement()) {
      s.executeUpdate("UPDATE chunks SET content = 'Zeppelins moored above the harbour cranes'"
          + " WHERE id = '" + chunk + "'");
    }
    assertThat(ReembedderFixture.count(jdbc, "SELECT count(*) FROM chunk_terms WHERE chunk_id = '"
        + chunk + "' AND term IN ('zeppelin', 'moor', 'harbour', 'crane')")).isEqualTo(4);
    assertThat(ReembedderFixture.count(jdbc, "SELECT count(*) FROM chunk_terms WHERE chunk_id = '"
        + chunk + "'")).isEqualTo(4);
    assertThat(ReembedderFixture.count(jdbc, "SELECT token_count FROM chunks WHERE id = '" + chunk
        + "'")).isEqualTo(4);
    assertThat(ReembedderFixture.count(jdbc,
        "SELECT total_tokens FROM corpus_stats WHERE tenant_id = '" + Tenants.DEFAULT + "'"))
        .isEqualTo(totalBefore - lengthBefore + 4);
  }

  @Test
  @DisplayName("a run stopped after one batch keeps that batch; the next run does only the rest")
  void stoppedRunResumes() throws Exception {
    AtomicReference<Reembedder> first = new AtomicReference<>();
    Embedder stopsDuringFirstBatch = new DelegatingEmbedder(embedder) {
      @Override
      public List<float[]> embedPassages(List<String> texts) {
        first.get().stop();
        return super.embedPassages(texts);
      }
    };
    first.set(reembedder(stopsDuringFirstBatch));

    Status stopped = first.get().run().await();

    assertThat(stopped.state()).isEqualTo(Status.State.STOPPED);
    assertThat(stopped.done()).isEqualTo(BATCH);
    assertThat(stopped.total()).isEqualTo(STALE_A + STALE_B);
    assertThat(remainingStale()).isEqualTo(STALE_A + STALE_B - BATCH);
    Map<UUID, Stored> afterFirst = ReembedderFixture.chunks(jdbc);

    Status resumed = reembedder(embedder).run().await();

    assertThat(resumed.state()).isEqualTo(Status.State.DONE);
    assertThat(resumed.total()).isEqualTo(STALE_A + STALE_B - BATCH);
    assertThat(resumed.done()).isEqualTo(STALE_A + STALE_B - BATCH);
    assertThat(remainingStale()).isZero();
    Map<UUID, Stored> afterSecond = ReembedderFixture.chunks(jdbc);
    long untouched = afterFirst.entrySet().stream()
        .filter(e -> e.getValue().model().equals(OnnxEmbedder.DEFAULT))
        .filter(e -> afterSecond.get(e.getKey()).xmin().equals(e.getValue().xmin()))
        .count();
    assertThat(untouched).as("chunks done by the first run, not rewritten by the second")
        .isEqualTo(BATCH + CURRENT);
  }

  @Test
  @DisplayName("an embedder that keeps failing ends the run as failed, after retries, keeping the batches done; the next run finishes")
  void failedRunReportsAndResumes() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    Embedder failsAfterFirstBatch = new DelegatingEmbedder(embedder) {
      @Override
      public List<float[]> embedPassages(List<String> texts) {
        if (calls.incrementAndGet() > 1) {
          throw new IllegalStateException("embeddings endpoint answered 503");
        }
        return super.embedPassages(texts);
      }
    };

    Status failed = reembedder(failsAfterFirstBatch).run().await();

    assertThat(failed.state()).isEqualTo(Status.State.FAILED);
    assertThat(failed.error()).contains("embeddings endpoint answered 503");
    assertThat(failed.done()).isEqualTo(BATCH);
    assertThat(calls.get()).isEqualTo(1 + Reembedder.ATTEMPTS);
    assertThat(remainingStale()).isEqualTo(STALE_A + STALE_B - BATCH);

    Status resumed = reembedder(embedder).run().await();
    assertThat(resumed.state()).isEqualTo(Status.State.DONE);
    assertThat(remainingStale()).isZero();
  }

  @Test
  @Timeout(60)
  @DisplayName("stop while a failed batch waits for its retry ends the run at once, not after the backoff")
  void stopCancelsTheRetryWait() throws Exception {
    CompletableFuture<Void> failedOnce = new CompletableFuture<>();
    AtomicInteger calls = new AtomicInteger();
    Embedder failsAfterFirstBatch = new DelegatingEmbedder(embedder) {
      @Override
      public List<float[]> embedPassages(List<String> texts) {
        if (calls.incrementAndGet() > 1) {
          failedOnce.complete(null);
          throw new IllegalStateException("embeddings endpoint answered 429");
        }
        return super.embedPassages(texts);
      }
    };
    Reembedder r = new Reembedder(vertx, pool, failsAfterFirstBatch, BATCH, Duration.ofMinutes(10));
    Future<Status> run = r.run();
    failedOnce.get();

    Status stopped = r.stop().await();

    assertThat(run.isComplete()).isTrue();
    // STOPPED when the retry was already waiting; FAILED when stop came before the batch's
    // failure reached the loop, which then gives up instead of retrying.
    assertThat(stopped.state()).isIn(Status.State.STOPPED, Status.State.FAILED);
    assertThat(stopped.done()).isEqualTo(BATCH);
    assertThat(calls.get()).isEqualTo(2);
    assertThat(remainingStale()).isEqualTo(STALE_A + STALE_B - BATCH);
  }

  @Test
  @DisplayName("vector search misses chunks under another model and finds them once re-embedded")
  void vectorSearchFindsReembeddedChunks() throws Exception {
    List<RankedChunk> before = search.rank(Tenants.DEFAULT, ReembedderFixture.LIGHTHOUSE_QUERY,
        SearchMode.VECTOR, 10).await();
    assertThat(before).extracting(RankedChunk::chunkId).doesNotContain(corpus.lighthouse())
        .hasSize(CURRENT);

    assertThat(reembedder(embedder).run().await().state()).isEqualTo(Status.State.DONE);

    List<RankedChunk> after = search.rank(Tenants.DEFAULT, ReembedderFixture.LIGHTHOUSE_QUERY,
        SearchMode.VECTOR, 10).await();
    assertThat(after).hasSize(10);
    assertThat(after.getFirst().chunkId()).isEqualTo(corpus.lighthouse());
    List<RankedChunk> otherTenant = search.rank(corpus.tenantB(), "the otter of the chalk downs",
        SearchMode.VECTOR, 100).await();
    assertThat(otherTenant).hasSize(STALE_B);
  }

  @Test
  @DisplayName("stop before run: nothing runs and the status says stopped")
  void stopBeforeRun() throws Exception {
    Reembedder r = reembedder(embedder);
    assertThat(r.status().state()).isEqualTo(Status.State.PENDING);
    assertThat(r.stop().await().state()).isEqualTo(Status.State.STOPPED);
    assertThat(remainingStale()).isEqualTo(STALE_A + STALE_B);
  }

  /** Rows of {@code before} that are gone or carry another value or row version in {@code after}. */
  private static long rewritten(Map<String, String> before, Map<String, String> after) {
    return before.entrySet().stream()
        .filter(e -> !e.getValue().equals(after.get(e.getKey())))
        .count();
  }

  private static long remainingStale() throws Exception {
    return ReembedderFixture.count(jdbc, "SELECT count(*) FROM chunks WHERE embedding_model <> '"
        + OnnxEmbedder.DEFAULT + "'");
  }
}
