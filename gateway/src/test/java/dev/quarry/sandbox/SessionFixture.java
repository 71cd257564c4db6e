package dev.quarry.sandbox;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A {@link SandboxService} on the real engine with the real runner image, over {@link SandboxFixture}'s
 * documents, plus what tests need to check that nothing is left behind.
 */
final class SessionFixture implements AutoCloseable {
  final SandboxFixture fx;
  final Vertx vertx = Vertx.vertx();
  final SandboxService service;
  final dev.quarry.telemetry.QuarryMetrics metrics = new dev.quarry.telemetry.QuarryMetrics();

  SessionFixture(Path tempDir, int poolPerTenant) throws Exception {
    this(tempDir, poolPerTenant, SandboxLimits.DEFAULTS);
  }

  SessionFixture(Path tempDir, int poolPerTenant, SandboxLimits limits) throws Exception {
    this(tempDir, poolPerTenant, limits, SandboxSettings.DEFAULT_MAX_ACTIVE, SandboxSettings.DEFAULT_MAX_WAIT);
  }

  /**
   * With a capacity of its own: at most {@code maxActive} containers, a request waiting {@code maxWait}.
   * One tenant may take all of it: the capacity is under test here, not the fair share.
   */
  SessionFixture(Path tempDir, int poolPerTenant, SandboxLimits limits, int maxActive, Duration maxWait)
      throws Exception {
    this(tempDir, poolPerTenant, limits, RunnerImage.ensure(), List.of(), maxActive, maxWait,
        SandboxSettings.Fairness.DEFAULTS.withTenantSharePercent(100));
  }

  /** With fairness limits of the test's own, on an image of its own. */
  SessionFixture(Path tempDir, String image, int maxActive, Duration maxWait, SandboxSettings.Fairness fairness)
      throws Exception {
    this(tempDir, image, maxActive, maxWait, fairness, tenant -> Future.succeededFuture(Integer.MAX_VALUE));
  }

  /** As above, with each tenant's concurrent_sandboxes quota. */
  SessionFixture(Path tempDir, String image, int maxActive, Duration maxWait, SandboxSettings.Fairness fairness,
      java.util.function.Function<java.util.UUID, Future<Integer>> sandboxQuota) throws Exception {
    this(tempDir, 0, SandboxLimits.DEFAULTS, image, List.of(), maxActive, maxWait, fairness, sandboxQuota);
  }

  /** With an image and a container command of the test's own (empty: the image's). */
  SessionFixture(Path tempDir, int poolPerTenant, SandboxLimits limits, String image, List<String> command)
      throws Exception {
    this(tempDir, poolPerTenant, limits, image, command, SandboxSettings.DEFAULT_MAX_ACTIVE,
        SandboxSettings.DEFAULT_MAX_WAIT, SandboxSettings.Fairness.DEFAULTS);
  }

  private SessionFixture(Path tempDir, int poolPerTenant, SandboxLimits limits, String image, List<String> command,
      int maxActive, Duration maxWait, SandboxSettings.Fairness fairness) throws Exception {
    this(tempDir, poolPerTenant, limits, image, command, maxActive, maxWait, fairness,
        tenant -> Future.succeededFuture(Integer.MAX_VALUE));
  }

  private SessionFixture(Path tempDir, int poolPerTenant, SandboxLimits limits, String image, List<String> command,
      int maxActive, Duration maxWait, SandboxSettings.Fairness fairness,
      java.util.function.Function<java.util.UUID, Future<Integer>> sandboxQuota) throws Exception {
    fx = new SandboxFixture(tempDir);
    // The capacity asked for, whatever this machine's CPUs (CpuSharesTest has the bound from them).
    SandboxSettings settings = new SandboxSettings(SandboxSettings.DEFAULT_DOCKER_HOST, image, command, "",
        fx.gatewayId, fx.runRoot, limits, SandboxLimits.MAXIMUMS, poolPerTenant, Duration.ofMinutes(10), false,
        maxActive, maxWait, fairness).withCpu(SandboxSettings.Cpu.UNBOUNDED);
    service = new SandboxService(vertx, settings, TenantTrees.fixed(vertx, fx.documentsRoot), metrics,
        sandboxQuota);
    await(service.start());
  }

  static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
  }

  CellOptions options() {
    return CellOptions.defaults(service.settings());
  }

  /** Nothing of this gateway left: no container, no run directory (and so no socket). */
  void assertClean() throws Exception {
    org.assertj.core.api.Assertions.assertThat(fx.containers()).as("leftover containers").isEmpty();
    org.assertj.core.api.Assertions.assertThat(fx.runDirs()).as("leftover run directories").isEmpty();
    org.assertj.core.api.Assertions.assertThat(service.liveSandboxIds()).as("live sandboxes").isEmpty();
  }

  @Override
  public void close() throws Exception {
    try {
      await(service.close());
      await(vertx.close());
    } finally {
      fx.close();
    }
  }

  /** Callbacks with fixed answers: the session's plumbing, not the gateway's search, is under test. */
  record Scripted(JsonArray hits, JsonArray documents) implements Callbacks {
    static Scripted simple() {
      return new Scripted(new JsonArray().add(new JsonObject().put("chunk_id", "c1").put("content", "hello")),
          new JsonArray().add(new JsonObject().put("id", "d1").put("title", "T")));
    }

    @Override
    public Future<JsonArray> search(String query, int limit) {
      if (query.equals("fail")) {
        return Future.failedFuture(new CallbackFailure("ValueError", "no such query"));
      }
      if (query.equals("boom")) {
        return Future.failedFuture(new IllegalStateException("secret internal detail"));
      }
      JsonArray out = hits.copy();
      out.add(new JsonObject().put("query", query).put("limit", limit));
      return Future.succeededFuture(out);
    }

    @Override
    public Future<JsonArray> listDocuments() {
      return Future.succeededFuture(documents);
    }

    @Override
    public Future<String> llm(String prompt) {
      return Future.succeededFuture("echo: " + prompt);
    }
  }
}
