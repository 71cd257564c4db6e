package dev.quarry.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Measures what the warm pool buys: a cold launch (create → running) against a take from a full
 * pool. Prints the figures; the bounds are generous sanity checks, the benchmark holds the targets.
 */
@DisplayName("Sandbox start-up timings")
class SandboxTimingTest {
  private static final int RUNS = 10;

  @TempDir static Path tmp;
  static SandboxFixture fx;
  static Vertx vertx;

  @BeforeAll
  static void setUp() throws Exception {
    fx = new SandboxFixture(tmp);
    vertx = Vertx.vertx();
  }

  @AfterAll
  static void tearDown() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
    fx.close();
  }

  static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
  }

  @Test
  @DisplayName("a warm take is far faster than a cold launch")
  void coldVersusWarm() throws Exception {
    ContainerLauncher launcher = fx.launcher();
    launcher.remove(launcher.launch(fx.tenantA, fx.documents(fx.tenantA))); // first-use costs out

    double[] cold = new double[RUNS];
    for (int i = 0; i < RUNS; i++) {
      long t0 = System.nanoTime();
      Sandbox s = launcher.launch(fx.tenantA, fx.documents(fx.tenantA));
      cold[i] = (System.nanoTime() - t0) / 1e6;
      launcher.remove(s);
    }

    WarmPool pool = new WarmPool(vertx, launcher, fx::documents);
    double[] warm = new double[RUNS];
    try {
      for (int i = 0; i < RUNS; i++) {
        await(pool.warm(fx.tenantA));
        long t0 = System.nanoTime();
        Sandbox s = await(pool.take(fx.tenantA));
        warm[i] = (System.nanoTime() - t0) / 1e6;
        assertThat(launcher.state(s).running()).isTrue();
        await(pool.dispose(s));
      }
    } finally {
      await(pool.close());
    }

    double coldP50 = p50(cold);
    double warmP50 = p50(warm);
    System.out.printf("sandbox cold start (create -> running) p50 %.1f ms, max %.1f ms over %d%n",
        coldP50, Arrays.stream(cold).max().orElseThrow(), RUNS);
    System.out.printf("sandbox warm-pool take p50 %.3f ms, max %.3f ms over %d%n",
        warmP50, Arrays.stream(warm).max().orElseThrow(), RUNS);
    assertThat(warmP50).isLessThan(5.0);
    assertThat(coldP50).isLessThan(10_000.0).isGreaterThan(warmP50 * 10);
    assertThat(fx.containers()).isEmpty();
  }

  private static double p50(double[] xs) {
    double[] sorted = xs.clone();
    Arrays.sort(sorted);
    return sorted[sorted.length / 2];
  }
}
