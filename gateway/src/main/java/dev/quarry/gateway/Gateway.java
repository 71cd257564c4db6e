package dev.quarry.gateway;

import dev.quarry.config.Config;
import dev.quarry.telemetry.QuarryMetrics;

import com.github.dockerjava.api.DockerClient;
import dev.quarry.agent.AbandonedAnalyses;
import dev.quarry.agent.AgentSettings;
import dev.quarry.agent.AnalysisService;
import dev.quarry.callbacks.CallbackService;
import dev.quarry.callbacks.CallbackTurns;
import dev.quarry.callbacks.TokenAccount;
import dev.quarry.search.QueryRules;
import dev.quarry.agent.AnalysisStore;
import dev.quarry.agent.ModelClient;
import dev.quarry.api.ApiRoutes;
import dev.quarry.sandbox.CellOptions;
import dev.quarry.ingest.IngestService;
import dev.quarry.ingest.Reembedder;
import dev.quarry.sandbox.ContainerLauncher;
import dev.quarry.sandbox.SandboxService;
import dev.quarry.sandbox.SandboxSettings;
import dev.quarry.sandbox.TenantTrees;
import dev.quarry.search.Embedder;
import dev.quarry.search.Embedders;
import dev.quarry.search.SearchService;
import dev.quarry.store.Database;
import dev.quarry.store.DocumentStore;
import dev.quarry.store.DocumentsFs;
import dev.quarry.config.Quota;
import dev.quarry.sandbox.SandboxQuotaExceeded;
import dev.quarry.store.Notifications;
import dev.quarry.store.Replicas;
import dev.quarry.tenancy.QuotaExceeded;
import dev.quarry.tenancy.Quotas;
import dev.quarry.tenancy.TenantStore;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.micrometer.Label;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MicrometerMetricsOptions;
import io.vertx.micrometer.VertxPrometheusOptions;
import io.vertx.sqlclient.Pool;
import java.io.IOException;
import java.nio.file.Files;
import java.util.EnumSet;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The composition root: migrates the database, builds the services and serves the API. Nothing
 * takes traffic before the schema is current. Stopping it drains ({@link Lifecycle}) first.
 */
public final class Gateway extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(Gateway.class);
  /** How long in-flight requests get to finish on shutdown, once long-running work has drained. */
  private static final long DRAIN_SECONDS = 10;
  private static final long PROBE_INTERVAL_MS = 15_000;
  private static final long SWEEP_INTERVAL_MS = 60_000;

  private final Config config;
  private final OpsSettings ops;
  private final QuarryMetrics metrics;
  private final SandboxSettings sandboxSettings;
  private final AgentSettings agentSettings;
  private SandboxService sandboxes;
  private ModelClient model;
  private AnalysisService analyses;
  private Pool pool;
  private HttpServer server;
  private HttpServer metricsServer;
  private DockerClient docker;
  private Reembedder reembedder;
  private Future<Reembedder.Status> reembedding = Future.succeededFuture();
  private Lifecycle lifecycle;
  private Readiness readiness;
  private int schemaVersion;
  private long probeTimer = -1;
  private long sweepTimer = -1;
  private long searchWatch = -1;
  private long connectionSweep = -1;
  private ConnectionGuard connections;
  /** Open connections the metrics port (scrapes and probes) takes. */
  static final int METRICS_MAX_CONNECTIONS = 64;
  private ConnectionGuard metricsConnections;
  private long metricsSweep = -1;
  private Router router;
  private Cluster cluster;
  private volatile ApiRoutes api;

  /** {@code config} with every other part at its defaults (no model endpoint; sandboxes as built in). */
  public Gateway(Config config) {
    this(GatewaySettings.of(config), new QuarryMetrics());
  }

  public Gateway(Config config, SandboxSettings sandboxSettings) {
    this(GatewaySettings.of(config).withSandboxes(sandboxSettings), new QuarryMetrics());
  }

  public Gateway(Config config, OpsSettings ops, QuarryMetrics metrics) {
    this(GatewaySettings.of(config).withOps(ops), metrics);
  }

  public Gateway(Config config, OpsSettings ops, QuarryMetrics metrics, AgentWiring wiring) {
    this(wiring.applyTo(GatewaySettings.of(config).withOps(ops)), metrics);
  }

  public Gateway(GatewaySettings settings, QuarryMetrics metrics) {
    this.config = settings.config();
    this.ops = settings.ops();
    this.metrics = metrics;
    this.sandboxSettings = settings.sandboxes();
    this.agentSettings = settings.agent();
  }

  /** The settings of analyses for tests and benchmarks: the model endpoint and the sandboxes; null keeps the defaults. */
  public record AgentWiring(AgentSettings agent, SandboxSettings sandboxes) {
    GatewaySettings applyTo(GatewaySettings settings) {
      GatewaySettings s = agent == null ? settings : settings.withAgent(agent);
      return sandboxes == null ? s : s.withSandboxes(sandboxes);
    }
  }

  /**
   * A Vert.x that reports its HTTP server and client and its pools into {@code metrics}' registry.
   * Labels are bounded: the route pattern, never the path (which holds ids).
   */
  public static Vertx vertx(QuarryMetrics metrics) {
    MicrometerMetricsOptions options = new MicrometerMetricsOptions()
        .setEnabled(true)
        .setJvmMetricsEnabled(false)
        .setLabels(EnumSet.of(Label.HTTP_METHOD, Label.HTTP_CODE, Label.HTTP_ROUTE,
            Label.POOL_TYPE, Label.POOL_NAME, Label.NAMESPACE))
        .setPrometheusOptions(new VertxPrometheusOptions().setEnabled(true));
    return Vertx.builder()
        .with(new VertxOptions().setMetricsOptions(options))
        .withMetrics(new MicrometerMetricsFactory(metrics.registry()))
        .build();
  }

  @Override
  public Future<?> start() {
    // Whatever reaches a client or an analysis' record names these by their settings, never by path.
    dev.quarry.config.HostPaths.protect("QUARRY_DATA_DIR", config.dataDir());
    dev.quarry.config.HostPaths.protect("QUARRY_SANDBOX_RUN_DIR", sandboxSettings.runRoot());
    vertx.exceptionHandler(Gateway::unhandled);
    lifecycle = new Lifecycle(vertx);
    readiness = new Readiness(vertx, metrics);
    return vertx.executeBlocking(this::prepare)
        .compose(embedder -> {
          pool = Database.pool(vertx, config);
          DocumentsFs documentsFs = new DocumentsFs(vertx, pool, config.dataDir().resolve("documents"));
          SearchService search = new SearchService(vertx, pool, embedder, config, metrics);
          reembedder = new Reembedder(vertx, pool, embedder);
          SandboxSettings sandboxed = sandboxSettings;
          // One replica of those sharing the database: quotas are counted there, across them all.
          cluster = new Cluster(vertx, new Replicas(vertx, pool, sandboxed.gatewayId(), ops.replicaLease()),
              new Notifications(vertx, Database.appConnectOptions(config)));
          Quotas quotas = new Quotas(pool, config.tenancy(), cluster.replicas());
          TenantStore tenants = new TenantStore(pool);
          TenantTrees trees = new TenantTrees(documentsFs.root(), documentsFs::sync,
              (tenant, work) -> documentsFs.sync(tenant, work::use));
          sandboxes = new SandboxService(vertx, sandboxed, trees, metrics,
              tenant -> quotas.limits(tenant).map(l -> (int) l.of(Quota.CONCURRENT_SANDBOXES)),
              tenant -> quotas.acquireSandbox(tenant).<Runnable>map(permit -> permit::close)
                  .recover(e -> Future.failedFuture(e instanceof QuotaExceeded over
                      ? new SandboxQuotaExceeded(over.limit()) : e)));
          addReadinessChecks();
          Future<Void> mounts = addMountCheck(sandboxed);
          // A tenant deleted through another replica loses its sandboxes and search copies here too:
          // at once by notification (Cluster), within these checks if that was missed.
          sandboxes.watchTenants(tenants::existing, SandboxService.TENANT_CHECK);
          searchWatch = search.watchTenants(tenants::existing, SearchService.TENANT_CHECK);
          DocumentStore documents = new DocumentStore(pool, documentsFs);
          // Without a model endpoint analyses are refused (saying how to configure one); the rest works.
          model = new ModelClient(agentSettings, metrics);
          addModelCheck();
          // One room for what sandbox code may call, given to executions, analyses and replays alike:
          // every llm() on every path is asked of and counted in the tenant's daily tokens there.
          CallbackService callbacks = new CallbackService(search, documents, QueryRules.of(config),
              model.configured() ? model.asLlm() : null, TokenAccount.of(quotas), CallbackTurns.of(vertx, quotas));
          analyses = new AnalysisService(model, sandboxes::open, callbacks, quotas, new AnalysisStore(pool),
              agentSettings, CellOptions.defaults(sandboxed), metrics);
          // A drain lets running analyses finish within its grace, then cancels them; each records its end
          // before the sandboxes go.
          analyses.trackWith(cancel -> lifecycle.begin("analysis", reason -> cancel.run())::close);
          // Its analyses are held under this replica's lease; a drain hands them to another replica
          // when one is live, rather than letting them run out the grace and be cancelled.
          analyses.holdAs(cluster.replicas().id(), cluster.replicas()::live);
          lifecycle.onDrain(analyses::drain);
          lifecycle.onShutdown("analyses", analyses::close);
          // An ingest under way when a drain starts gets the drain's grace to finish, like an analysis.
          IngestService ingest = new IngestService(vertx, pool, embedder, documentsFs, config, metrics)
              .trackWith(cancel -> lifecycle.begin("ingest", reason -> cancel.run())::close);
          addConverterCheck(ingest);
          // Each format converts a sample before the gateway serves: the converters' libraries are
          // initialised while the heap is empty, not inside the first (perhaps hostile) upload.
          Future<Void> converted = ingest.checkConverters();
          ApiRoutes routes = new ApiRoutes(vertx, config,
              ingest,
              documents,
              search, tenants, quotas, documentsFs,
              sandboxes, callbacks)
              .withAnalyses(analyses)
              .withDatabase(pool);
          cluster.listen(tenants, quotas, analyses, sandboxes, search, documentsFs);
          api = routes;
          router = routes.router();
          connections = new ConnectionGuard(java.time.Duration.ofSeconds(config.httpIdleSeconds()),
              config.maxConnections(), metrics);
          connectionSweep = connections.sweepEvery(vertx);
          // The metrics port (scrapes and probes) gets a guard of its own, small: it was unguarded, and
          // 300 silent connections there held 300 file descriptors for good (red team R7-2).
          metricsConnections = new ConnectionGuard(java.time.Duration.ofSeconds(config.httpIdleSeconds()),
              METRICS_MAX_CONNECTIONS, metrics);
          metricsSweep = metricsConnections.sweepEvery(vertx);
          OpsRoutes opsRoutes = new OpsRoutes(readiness, lifecycle, metrics);
          opsRoutes.mountProbes(router);
          Router metricsRouter = Router.router(vertx);
          opsRoutes.mountMetrics(metricsRouter);
          // The probes on the metrics port too: the kubelet's liveness probe must not fail, and restart
          // the gateway, because clients hold the API port's connections (red team R6-1).
          opsRoutes.mountProbes(metricsRouter);
          // Its failures (an unknown path, a wrong method) in the API's error shape, as on the API's port.
          ApiRoutes.answerFailures(metricsRouter);
          // Without Docker the knowledge base still serves; executions answer 503 until it is back.
          // Once leftovers are gone, the sandbox image is pulled if the engine lacks it, and a probe
          // sandbox proves that sandboxes start (awaited only when no pull is needed).
          // A sandbox the engine cannot give (more CPU than it has) is a setting to fix: refused.
          Future<Void> reaped = sandboxes.start().recover(e -> {
            if (e instanceof dev.quarry.config.InvalidSetting) {
              return Future.failedFuture(e);
            }
            log.warn("sandboxes unavailable at start-up: {}", e.getMessage());
            return Future.succeededFuture();
          }).compose(v -> sandboxes.health().start());
          // The HNSW index for the configured model: without it vector search scans every chunk.
          // Built before the re-embed, so that re-embedded chunks go straight into it; the re-embed
          // runs in the background once the gateway serves (never when it could not start). The
          // gateway's own role may not create indexes: the owner does, on a pool of its own that is
          // closed once the index is there, so that after start-up the owner only ever migrated.
          Pool owner = Database.ownerPool(vertx, config);
          Future<Void> indexed = search.prepare(owner).eventually(owner::close);
          return Future.join(indexed, reaped, mounts, converted, cluster.start())
              .compose(v -> metricsConnections.server(vertx, metricsRouter).listen(ops.metricsPort())
                  .recover(e -> Future.failedFuture(new IllegalStateException("cannot serve /metrics on port "
                      + ops.metricsPort() + " (QUARRY_METRICS_PORT): " + e.getMessage(), e))))
              .compose(metricsListening -> {
                metricsServer = metricsListening;
                // A gateway that cannot serve its API does not keep its metrics port either.
                return connections.server(vertx, router).listen(config.httpPort())
                    .recover(e -> metricsListening.close().transform(x -> Future.failedFuture(e)));
              })
              .map(listening -> {
                routes.listeningOn(listening.actualPort());
                reembedding = reembedder.run();
                return listening;
              });
        })
        .onSuccess(listening -> {
          server = listening;
          // Probed on a timer as well as by /readyz, so that quarry_dependency_up stays current
          // where nothing polls the probe.
          probeTimer = vertx.setPeriodic(0, PROBE_INTERVAL_MS, id -> readiness.evaluate());
          // Analyses that a killed gateway (this one's earlier life or another replica) left running.
          // One replica a minute sweeps for all (Cluster.sweep).
          AbandonedAnalyses abandoned = new AbandonedAnalyses(pool, AbandonedAnalyses.DEFAULT_GRACE);
          sweepTimer = vertx.setPeriodic(0, SWEEP_INTERVAL_MS, id -> {
            cluster.sweep(abandoned);
            // Upload files a crashed gateway sharing this data directory left (this one's went at start-up).
            vertx.executeBlocking(() -> ApiRoutes.sweepUploads(config), false);
          });
          log.info("Quarry gateway listening on port {}", listening.actualPort());
        });
  }

  private static final java.util.concurrent.atomic.AtomicInteger lateAnswers = new java.util.concurrent.atomic.AtomicInteger();

  /**
   * What a handler threw outside any route's chain (in a callback): logged as Vert.x would, at ERROR
   * with its trace, but for a handler answering a request whose answer went out already. That is
   * the end of a request refused for breaking HTTP while its handler still worked (the refusal
   * cannot wait: Vert.x closes the connection at once), or of one whose client left: nobody's error,
   * noted at INFO, the first and every thousandth.
   */
  private static void unhandled(Throwable e) {
    String m = e.getMessage();
    if (e instanceof IllegalStateException && ("Response head already sent".equals(m)
        || "Response has already been written".equals(m))) {
      int n = lateAnswers.incrementAndGet();
      if (n == 1 || n % 1000 == 0) {
        log.info("a handler answered a request already answered ({}; {} so far)", m, n);
      }
      return;
    }
    log.error("Unhandled exception", e);
  }

  /**
   * The blocking part of start-up: schema, the Docker client (slow to load the first time),
   * directories, the embedding model (loaded or probed).
   */
  private Embedder prepare() throws IOException {
    schemaVersion = Database.migrate(config);
    Database.checkAppRole(config);
    docker = ContainerLauncher.connect(ops.dockerHost());
    Files.createDirectories(config.dataDir().resolve("documents"));
    Files.createDirectories(ApiRoutes.uploadsDir(config));
    int swept = ApiRoutes.sweepUploads(config);
    if (swept > 0) {
      log.warn("deleted {} upload files left behind by a gateway that stopped mid-request", swept);
    }
    return Embedders.fromConfig(config);
  }

  private void addReadinessChecks() {
    readiness.add("database", () -> pool.query("SELECT 1").execute().map("reachable"));
    readiness.add("migrations", () -> pool
        .query("SELECT max(version::int) AS version FROM flyway_schema_history WHERE success")
        .execute()
        .map(rows -> {
          Integer applied = rows.iterator().next().getInteger("version");
          if (applied == null || applied < schemaVersion) {
            throw new IllegalStateException("schema version " + applied + ", this gateway needs " + schemaVersion);
          }
          return "schema version " + applied;
        }));
    // Not "reachable at" the engine's address: /readyz takes no key, and the address is a host path
    // (unix:///var/run/docker.sock) or the host's network layout.
    readiness.add("docker", () -> vertx.executeBlocking(() -> {
      docker.pingCmd().exec();
      return "reachable";
    }, false));
    // A reachable engine is not enough: it must have the sandbox image and start a sandbox from it.
    readiness.add("sandboxes", () -> sandboxes.health().check());
    readiness.info("schema_version", () -> schemaVersion);
    readiness.info("reembedding", () -> reembeddingJson(reembedder.status()));
  }

  /**
   * Every format converts on this gateway: a converter left unusable (a library whose initialiser
   * failed, say for want of memory) makes the gateway unready, naming the format, instead of
   * answering each of its uploads with an error. Beside it, the ingests' memory: what they hold
   * and how many wait for it.
   */
  private void addConverterCheck(IngestService ingest) {
    readiness.add("converters", () -> {
      String problem = ingest.converterProblem();
      return problem == null ? Future.succeededFuture("every format converts its sample")
          : Future.failedFuture(new IllegalStateException(problem));
    });
    readiness.info("ingest_memory", () -> new io.vertx.core.json.JsonObject()
        .put("capacity_mb", ingest.memory().capacity() >> 20)
        .put("reserved_mb", ingest.memory().reserved() >> 20)
        .put("waiting", ingest.memory().waiting()));
  }

  /**
   * Whether a sandbox's /proc/self/mountinfo shows host paths of the documents or run directories
   * (they are not on filesystems of their own; see MountPrivacy). Under
   * {@code QUARRY_SANDBOX_MOUNT_PRIVACY=require} the start fails, naming them; otherwise a warning
   * with the paths goes to the log once, and /readyz (which anyone may read) reports
   * {@code sandbox_mounts} without them, never required.
   */
  private Future<Void> addMountCheck(SandboxSettings sandboxed) {
    java.util.concurrent.Callable<String> shown = () -> {
      Files.createDirectories(sandboxed.runRoot());
      return dev.quarry.sandbox.MountPrivacy.problem(config.dataDir(), sandboxed.runRoot());
    };
    readiness.advise("sandbox_mounts", () -> vertx.executeBlocking(() -> {
      if (shown.call() != null) {
        throw new IllegalStateException("sandboxes' mountinfo shows host paths of QUARRY_DATA_DIR or"
            + " QUARRY_SANDBOX_RUN_DIR (not on filesystems of their own; the log names them)");
      }
      return "documents and run directories show no host path";
    }, false));
    return vertx.executeBlocking(shown, false).compose(problem -> {
      if (problem == null) {
        return Future.succeededFuture();
      }
      if (sandboxed.mountPolicy() == dev.quarry.sandbox.MountPrivacy.Policy.REQUIRE) {
        return Future.failedFuture(new IllegalStateException("QUARRY_SANDBOX_MOUNT_PRIVACY=require: sandboxes'"
            + " /proc/self/mountinfo would show host paths (" + problem + "); put QUARRY_DATA_DIR and"
            + " QUARRY_SANDBOX_RUN_DIR on filesystems of their own (README, Security)"));
      }
      log.warn("sandboxes' /proc/self/mountinfo will show host paths ({}); put QUARRY_DATA_DIR and"
          + " QUARRY_SANDBOX_RUN_DIR on filesystems of their own (README, Security)", problem);
      return Future.succeededFuture();
    });
  }

  /**
   * Reported, never required: without a model endpoint analyses are refused, but ingestion, search
   * and executions work, and a gateway taken out of service would stop those too.
   */
  private void addModelCheck() {
    readiness.advise("model", () -> model.configured()
        ? Future.succeededFuture("configured: " + agentSettings.model())
        : Future.failedFuture(AgentSettings.HOW_TO_CONFIGURE));
  }

  private static JsonObject reembeddingJson(Reembedder.Status s) {
    JsonObject json = new JsonObject()
        .put("state", s.state().name().toLowerCase(Locale.ROOT))
        .put("model", s.model())
        .put("done", s.done())
        .put("total", s.total());
    return s.error() == null ? json : json.put("error", dev.quarry.config.HostPaths.redact(s.error()));
  }

  /** The port actually bound (differs from the configured one when that is 0). */
  public int port() {
    return server.actualPort();
  }

  /** The port {@code /metrics} is actually served on (differs from QUARRY_METRICS_PORT when that is 0). */
  public int metricsPort() {
    return metricsServer.actualPort();
  }

  /** Every route the gateway serves on its API port, as its router holds them (tests enumerate them). */
  /** The API's routes, once started. */
  public ApiRoutes api() {
    return api;
  }

  public java.util.List<io.vertx.ext.web.Route> routes() {
    return router.getRoutes();
  }

  /** Where long-running work registers, so that a shutdown drains it. */
  public Lifecycle lifecycle() {
    return lifecycle;
  }

  /** Where parts add their readiness checks (the agent: its model endpoint). */
  public Readiness readiness() {
    return readiness;
  }

  /** The analyses of this gateway (for tests and benchmarks). */
  public AnalysisService analyses() {
    return analyses;
  }

  public SandboxService sandboxes() {
    return sandboxes;
  }

  public QuarryMetrics metrics() {
    return metrics;
  }

  /**
   * The background re-embed of chunks recorded under another model: completes with its final
   * status (it never fails; a failed run says so in its status).
   */
  public Future<Reembedder.Status> reembedding() {
    return reembedding;
  }

  @Override
  public Future<?> stop() {
    vertx.cancelTimer(probeTimer);
    vertx.cancelTimer(sweepTimer);
    vertx.cancelTimer(searchWatch);
    // The connection sweep goes on until the server has shut down: connections opened during the
    // drain and left silent are closed as at any other time (red team R6-6).
    Future<Void> drained = lifecycle == null ? Future.succeededFuture() : lifecycle.drain(ops.drainGrace());
    return drained.eventually(() -> {
      // The re-embed ends after its batch in flight, while the server drains.
      Future<?> reembedStopped = reembedder == null ? Future.succeededFuture() : reembedder.stop();
      Future<Void> serverClosed = server == null
          ? Future.succeededFuture()
          : server.shutdown(DRAIN_SECONDS, TimeUnit.SECONDS);
      // Scraped until the API has drained, so the drain itself shows in the metrics.
      serverClosed = serverClosed.eventually(() -> {
        vertx.cancelTimer(connectionSweep);
        vertx.cancelTimer(metricsSweep);
        return metricsServer == null ? Future.succeededFuture() : metricsServer.close();
      });
      // Sandboxes go with the gateway: none may outlive it (the reaper of the next start is the backstop).
      Future<Void> sandboxesClosed = sandboxes == null ? Future.succeededFuture() : sandboxes.close();
      return Future.join(reembedStopped, serverClosed, sandboxesClosed);
    }).eventually(() -> {
      // This replica leaves the others once its work is done: what places it still holds go with it.
      return cluster == null ? Future.succeededFuture() : cluster.stop();
    }).eventually(() -> {
      closeDocker();
      if (model != null) {
        model.close();
      }
      return pool == null ? Future.succeededFuture() : pool.close();
    });
  }

  private void closeDocker() {
    if (docker != null) {
      try {
        docker.close();
      } catch (IOException e) {
        log.warn("closing the Docker client failed: {}", e.getMessage());
      }
    }
  }
}
