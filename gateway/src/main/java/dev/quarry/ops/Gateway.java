package dev.quarry.ops;

import dev.quarry.agent.AgentSettings;
import dev.quarry.agent.AnalysisService;
import dev.quarry.agent.AnalysisStore;
import dev.quarry.agent.ModelClient;
import dev.quarry.api.ApiRoutes;
import dev.quarry.sandbox.CellOptions;
import dev.quarry.ingest.IngestService;
import dev.quarry.ingest.Reembedder;
import dev.quarry.sandbox.SandboxService;
import dev.quarry.sandbox.SandboxSettings;
import dev.quarry.search.Embedder;
import dev.quarry.search.Embedders;
import dev.quarry.search.SearchService;
import dev.quarry.store.Database;
import dev.quarry.store.DocumentStore;
import dev.quarry.store.DocumentsFs;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpServer;
import io.vertx.sqlclient.Pool;
import java.nio.file.Files;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The composition root: migrates the database, builds the services and serves the API. Nothing
 * takes traffic before the schema is current.
 */
public final class Gateway extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(Gateway.class);
  /** How long in-flight requests get to finish on shutdown. */
  private static final long DRAIN_SECONDS = 10;

  private final Config config;
  private final SandboxSettings sandboxSettings;
  private final AgentSettings agentSettings;
  private SandboxService sandboxes;
  private ModelClient model;
  private AnalysisService analyses;
  private Pool pool;
  private HttpServer server;
  private Reembedder reembedder;
  private Future<Reembedder.Status> reembedding = Future.succeededFuture();

  public Gateway(Config config) {
    this(config, (SandboxSettings) null);
  }

  /** @param sandboxSettings null reads them from the QUARRY_SANDBOX_* environment at start */
  public Gateway(Config config, SandboxSettings sandboxSettings) {
    this(config, new AgentWiring(null, sandboxSettings));
  }

  public Gateway(Config config, AgentWiring wiring) {
    this.config = config;
    this.sandboxSettings = wiring.sandboxes();
    this.agentSettings = wiring.agent() != null ? wiring.agent() : AgentSettings.fromEnv();
  }

  /**
   * The settings of analyses: the model endpoint and the sandboxes; null ones are read from the
   * environment.
   */
  public record AgentWiring(AgentSettings agent, SandboxSettings sandboxes) {}

  @Override
  public Future<?> start() {
    return vertx.executeBlocking(this::prepare)
        .compose(embedder -> {
          pool = Database.pool(vertx, config);
          DocumentsFs documentsFs = new DocumentsFs(vertx, pool, config.dataDir().resolve("documents"));
          SearchService search = new SearchService(vertx, pool, embedder, config);
          reembedder = new Reembedder(vertx, pool, embedder);
          SandboxSettings sandboxed =
              sandboxSettings != null ? sandboxSettings : SandboxSettings.fromEnv(System.getenv());
          sandboxes = new SandboxService(vertx, sandboxed, documentsFs::sync);
          DocumentStore documents = new DocumentStore(pool, documentsFs);
          // Without a model endpoint analyses are refused (saying how to configure one); the rest works.
          model = new ModelClient(agentSettings);
          analyses = new AnalysisService(model, sandboxes::open, search, documents, new AnalysisStore(pool),
              agentSettings, CellOptions.defaults(sandboxed), config.searchMaxLimit(), config.maxQueryChars());
          ApiRoutes routes = new ApiRoutes(vertx, pool, config,
              new IngestService(vertx, pool, embedder, documentsFs, config),
              documents,
              search, reembedder::status, sandboxes, model.configured() ? model::completeLater : null)
              .withAnalyses(analyses);
          // The HNSW index for the configured model: without it vector search scans every chunk.
          // Built before the re-embed, so that re-embedded chunks go straight into it; the re-embed
          // runs in the background once the gateway serves (never when it could not start).
          // Without Docker the knowledge base still serves; executions answer 503 until it is back.
          Future<Void> reaped = sandboxes.start().recover(e -> {
            log.warn("sandboxes unavailable at start-up: {}", e.getMessage());
            return Future.succeededFuture();
          });
          return Future.join(search.prepare(), reaped)
              .compose(v -> vertx.createHttpServer().requestHandler(routes.router())
                  .listen(config.httpPort()))
              .map(listening -> {
                reembedding = reembedder.run();
                return listening;
              });
        })
        .onSuccess(listening -> {
          server = listening;
          log.info("Quarry gateway listening on port {}", listening.actualPort());
        });
  }

  /** The blocking part of start-up: schema, directories, the embedding model (loaded or probed). */
  private Embedder prepare() throws Exception {
    Database.migrate(config);
    Files.createDirectories(config.dataDir().resolve("documents"));
    Files.createDirectories(ApiRoutes.uploadsDir(config));
    return Embedders.fromConfig(config);
  }

  /** The port actually bound (differs from the configured one when that is 0). */
  public int port() {
    return server.actualPort();
  }

  /**
   * The background re-embed of chunks recorded under another model: completes with its final
   * status (it never fails; a failed run says so in its status).
   */
  public Future<Reembedder.Status> reembedding() {
    return reembedding;
  }

  /** The analyses of this gateway (for tests and benchmarks). */
  public AnalysisService analyses() {
    return analyses;
  }

  public SandboxService sandboxes() {
    return sandboxes;
  }

  @Override
  public Future<?> stop() {
    // The re-embed ends after its batch in flight, while the server drains.
    Future<?> reembedStopped = reembedder == null ? Future.succeededFuture() : reembedder.stop();
    Future<Void> serverClosed = server == null
        ? Future.succeededFuture()
        : server.shutdown(DRAIN_SECONDS, TimeUnit.SECONDS);
    // Running analyses are cancelled and record their end before their sandboxes and the pool go.
    Future<Void> analysesEnded = analyses == null ? Future.succeededFuture() : analyses.close();
    // Sandboxes go with the gateway: none may outlive it (the reaper of the next start is the backstop).
    return Future.join(reembedStopped, serverClosed, analysesEnded)
        .eventually(() -> sandboxes == null ? Future.succeededFuture() : sandboxes.close())
        .eventually(() -> {
          if (model != null) {
            model.close();
          }
          return pool == null ? Future.succeededFuture() : pool.close();
        });
  }
}
