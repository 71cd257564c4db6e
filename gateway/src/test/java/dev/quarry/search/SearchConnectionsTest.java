package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quarry.store.Database;
import dev.quarry.support.DelegatingEmbedder;
import dev.quarry.support.TestDatabase;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.sql.Connection;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A search's statements each take a pooled connection only while they run: with a pool of one
 * connection, the pool stays usable while the model embeds a query, and a failed embedding leaves
 * nothing taken.
 */
@DisplayName("Search holds a database connection only while a statement runs")
class SearchConnectionsTest {
  static TestDatabase db;
  static Vertx vertx;
  static Pool onePool;
  static GatedEmbedder embedder;
  static SearchService search;
  static UUID tenant;

  @BeforeAll
  static void setUp() throws Exception {
    db = TestDatabase.create();
    vertx = Vertx.vertx();
    // The gateway's own pool settings (prepared statements cached, pipelining), one connection.
    onePool = Database.pool(vertx, db.config(), 1);
    embedder = new GatedEmbedder(SharedEmbedder.get());
    search = new SearchService(vertx, onePool, embedder, db.config());
    db.prepare(vertx, search);
    try (Connection c = db.jdbc()) {
      Corpus corpus = new Corpus(c, SharedEmbedder.get());
      tenant = corpus.tenant("acme");
      corpus.doc(tenant, "Pumps")
          .header(1, "Maintenance")
          .text("Replace the inlet seal of the pump when the pressure drops below the threshold.")
          .text("Check the controller's fault log after every inspection.")
          .insert();
    }
  }

  @AfterAll
  static void tearDown() {
    if (onePool != null) {
      onePool.close().await();
    }
    if (vertx != null) {
      vertx.close().await();
    }
    if (db != null) {
      db.close();
    }
  }

  @Test
  @DisplayName("while the model embeds a new query, the search's connection is back in the pool")
  void noConnectionHeldWhileEmbedding() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    CompletableFuture<Void> gate = new CompletableFuture<>();
    embedder.hold(entered, gate);
    try {
      Future<List<SearchHit>> hits = search.search(tenant,
          new SearchRequest("inlet seal pressure (while embedding)", 5));
      assertThat(entered.await(30, TimeUnit.SECONDS)).as("the model was called").isTrue();
      // The pool's only connection serves someone else while the model is still busy: the
      // full-text statement gave it back when it finished, and nothing waits on it for the vector.
      Integer one = onePool.query("SELECT 1").execute().map(rows -> rows.iterator().next()
          .getInteger(0)).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      assertThat(one).isEqualTo(1);
      assertThat(hits.isComplete()).as("the search waits for the model").isFalse();
      gate.complete(null);
      assertThat(hits.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS))
          .isNotEmpty()
          .first().extracting(SearchHit::content).asString().contains("inlet seal");
    } finally {
      gate.complete(null);
      embedder.release();
    }
  }

  @Test
  @DisplayName("a failed embedding fails the search with the model's error and leaves no connection"
      + " taken")
  void failedEmbeddingReleasesConnections() throws Exception {
    embedder.fail(new IllegalStateException("embedding endpoint answered 503"));
    try {
      assertThatThrownBy(() -> search.search(tenant, new SearchRequest("controller fault log", 5))
          .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .hasMessageContaining("embedding endpoint answered 503");
    } finally {
      embedder.release();
    }
    // Both the full-text statement, which ran beside the model, and nothing else hold the one
    // connection: the next search (same query, the model answering again) gets it.
    assertThat(search.search(tenant, new SearchRequest("controller fault log", 5))
        .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS))
        .extracting(SearchHit::content).anySatisfy(c -> assertThat(c).contains("fault log"));
  }

  @Test
  @DisplayName("with one pooled connection, 24 searches at once (new and repeated queries) all complete"
      + " with the hits each gets alone")
  void concurrentSearchesShareOneConnection() throws Exception {
    List<String> queries = List.of("inlet seal", "pump pressure threshold", "controller fault log",
        "inspection");
    List<List<UUID>> alone = new java.util.ArrayList<>();
    for (String q : queries) {
      alone.add(search.search(tenant, new SearchRequest(q, 3)).toCompletionStage().toCompletableFuture()
          .get(30, TimeUnit.SECONDS).stream().map(SearchHit::chunkId).toList());
    }
    List<Future<List<SearchHit>>> all = new java.util.ArrayList<>();
    for (int i = 0; i < 24; i++) {
      // Every other one new to the vector cache (a trailing space), so the model runs for it.
      String q = queries.get(i % queries.size()) + (i % 2 == 0 ? "" : " ".repeat(1 + i));
      all.add(search.search(tenant, new SearchRequest(q, 3)));
    }
    for (int i = 0; i < all.size(); i++) {
      List<UUID> got = all.get(i).toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS)
          .stream().map(SearchHit::chunkId).toList();
      assertThat(got).as("search %d", i).isEqualTo(alone.get(i % queries.size()));
    }
  }

  /** The shared model, with a query embedding that can be held at a gate or made to fail. */
  static final class GatedEmbedder extends DelegatingEmbedder {
    private volatile CountDownLatch entered;
    private volatile CompletableFuture<Void> gate;
    private volatile RuntimeException failure;

    GatedEmbedder(Embedder model) {
      super(model);
    }

    void hold(CountDownLatch entered, CompletableFuture<Void> gate) {
      this.entered = entered;
      this.gate = gate;
    }

    void fail(RuntimeException e) {
      this.failure = e;
    }

    void release() {
      entered = null;
      gate = null;
      failure = null;
    }

    @Override
    public float[] embedQuery(String query) {
      RuntimeException e = failure;
      if (e != null) {
        throw e;
      }
      CountDownLatch in = entered;
      CompletableFuture<Void> g = gate;
      if (in != null && g != null) {
        in.countDown();
        g.join();
      }
      return super.embedQuery(query);
    }
  }
}
