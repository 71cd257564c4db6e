package dev.quarry.ingest;

import static dev.quarry.ingest.IngestFixture.await;
import static dev.quarry.ingest.IngestFixture.newTenant;
import static dev.quarry.ingest.IngestFixture.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.search.Embedder;
import dev.quarry.support.TestDatabase;
import dev.quarry.support.TestStack;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Ingests run on workers of their own: however many are stuck converting or embedding, Vert.x's
 * shared workers (which embed search queries, launch sandboxes and check Docker for /readyz) stay
 * free. Red team round 2 (F3b) filled the shared 20 with slow ingests and held a search for 34 s.
 */
@DisplayName("Ingest work never takes the gateway's shared workers")
class IngestWorkersTest {
  @AutoClose
  private static final TestStack stack = TestStack.start();
  private static final TestDatabase db = stack.db();
  private static final Vertx vertx = stack.vertx();
  private static final Pool pool = stack.pool();

  @Test
  @DisplayName("with 25 ingests of 5 tenants stuck in the model, the shared workers still run at once; then all 25 finish")
  void sharedWorkersStayFree() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger inModel = new AtomicInteger();
    Embedder stuck = new Embedder() {
      @Override public String modelName() { return "constant"; }
      @Override public int dimensions() { return 3; }
      @Override public List<float[]> embedPassages(List<String> texts) {
        inModel.incrementAndGet();
        try {
          release.await(120, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        List<float[]> out = new ArrayList<>();
        texts.forEach(t -> out.add(new float[] {1, 0, 0}));
        return out;
      }
      @Override public float[] embedQuery(String query) { return new float[] {1, 0, 0}; }
    };
    // Several tenants: one tenant's ingests take only IngestService.TENANT_WORKERS of the workers.
    List<UUID> tenants = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      tenants.add(newTenant(db));
    }
    IngestService ingest = new IngestService(vertx, pool, stuck, null, db.config());
    List<Future<IngestResult>> ingests = new ArrayList<>();
    for (int i = 0; i < 25; i++) {
      ingests.add(ingest.ingest(tenants.get(i % 5), text("n" + i + ".md", "docs/n" + i + ".md", "# Note " + i + "\n\nBody " + i + ".\n")));
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (inModel.get() < IngestService.INGEST_WORKERS && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
    assertThat(inModel.get()).as("ingests in the model at once").isEqualTo(IngestService.INGEST_WORKERS);
    try {
      String ran = vertx.executeBlocking(() -> "ran", false).toCompletionStage().toCompletableFuture()
          .get(10, TimeUnit.SECONDS);
      assertThat(ran).isEqualTo("ran");
    } finally {
      release.countDown();
    }
    for (Future<IngestResult> f : ingests) {
      assertThat(await(f).chunkCount()).isPositive();
    }
    assertThat(inModel.get()).isEqualTo(25);
  }
}
