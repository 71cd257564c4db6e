package dev.quarry.bench;

import dev.quarry.callbacks.TenantCallbacks;
import dev.quarry.callbacks.TokenAccount;
import dev.quarry.search.QueryRules;
import dev.quarry.ingest.IngestRequest;
import dev.quarry.ingest.IngestService;
import dev.quarry.sandbox.Callbacks;
import dev.quarry.sandbox.CellListener;
import dev.quarry.sandbox.CellOptions;
import dev.quarry.sandbox.CellOutcome;
import dev.quarry.sandbox.SandboxService;
import dev.quarry.sandbox.SandboxSession;
import dev.quarry.sandbox.SandboxSettings;
import dev.quarry.sandbox.Scope;
import dev.quarry.search.SearchRequest;
import dev.quarry.search.SearchService;
import dev.quarry.store.DocumentStore;
import dev.quarry.store.DocumentsFs;
import dev.quarry.tenancy.Tenants;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Quarry's side of the sandbox benchmark: {@link SandboxService} on a bench database with a few
 * ingested documents, callbacks served by the real {@link SearchService} for the tenant.
 */
final class QuarrySandboxes implements AutoCloseable {
  static final String QUERY = "invoice total paid late";
  static final String SEARCH_CELL = "hits = await search('" + QUERY + "', 5)\nprint(len(hits))";

  private final QuarryStack stack;
  private final BenchDatabase db;
  private final DocumentsFs fs;
  private final DocumentStore documents;
  private final Path runRoot;
  private final UUID tenant = Tenants.DEFAULT;
  /** Nanoseconds the last search callback spent in SearchService itself. */
  private final AtomicLong lastSearchNanos = new AtomicLong();

  QuarrySandboxes(BenchPaths paths, dev.quarry.search.Embedder model) throws Exception {
    db = BenchDatabase.fresh("sandbox", true);
    QuarryStack s = null;
    try {
      s = new QuarryStack(db.config(), model);
      runRoot = paths.work().resolve("sandbox-run");
      Path docs = paths.work().resolve("sandbox-documents");
      deleteTree(docs);
      fs = new DocumentsFs(s.vertx(), s.pool(), docs);
      documents = new DocumentStore(s.pool(), fs);
      IngestService ingest = new IngestService(s.vertx(), s.pool(), model, fs, db.config());
      for (int i = 0; i < 20; i++) {
        String text = "# Invoice " + i + "\n\nThe invoice total for month " + i + " was " + (1000 + 37 * i)
            + " euros; it was paid " + (i % 3 == 0 ? "late" : "on time") + " by customer " + (i * 7 % 11) + ".\n";
        ingest.ingest(tenant, new IngestRequest("invoice-" + i + ".md", "bench://invoice-" + i, null, "text/markdown",
            text.getBytes(StandardCharsets.UTF_8))).await();
      }
      stack = s;
    } catch (Exception e) {
      if (s != null) {
        s.close();
      }
      db.close();
      throw e;
    }
  }

  /** A service with its own gateway id, so its containers are told apart from anyone else's. */
  SandboxService service(SandboxSettings base, Path runRoot, int pool) throws Exception {
    return service(base, base.image(), runRoot, pool);
  }

  /** The same service on another image (a baseline runner measured in the same run). */
  SandboxService service(SandboxSettings base, String image, Path runRoot, int pool) throws Exception {
    Files.createDirectories(runRoot);
    SandboxSettings settings = new SandboxSettings(base.dockerHost(), image, base.command(), base.user(),
        "bench-" + UUID.randomUUID().toString().substring(0, 8), runRoot, base.limits(), base.maxLimits(), pool,
        base.reapInterval(), false, base.maxActive(), base.maxWait(), base.fairness());
    SandboxService service = new SandboxService(stack.vertx(), settings,
        new dev.quarry.sandbox.TenantTrees(fs.root(), fs::sync, (t, work) -> fs.sync(t, work::use)));
    service.start().await();
    return service;
  }

  Path runRoot() {
    return runRoot;
  }

  UUID tenant() {
    return tenant;
  }

  /** The gateway's own callbacks for the tenant, timing the SearchService part of each search. */
  Callbacks callbacks() {
    SearchService timed = stack.search();
    Callbacks gateway = new TenantCallbacks(tenant, Scope.ALL, timed, documents, QueryRules.of(db.config()),
        null, TokenAccount.unmetered(), dev.quarry.callbacks.CallbackTurns.unmetered(), () -> java.time.Instant.MAX);
    return new Callbacks() {
      @Override
      public Future<JsonArray> search(String query, int limit) {
        long start = System.nanoTime();
        return gateway.search(query, limit).onSuccess(r -> lastSearchNanos.set(System.nanoTime() - start));
      }

      @Override
      public Future<JsonArray> listDocuments() {
        return gateway.listDocuments();
      }

      /** No model here: answered at once, so a cell calling it measures the bare round trip. */
      @Override
      public Future<String> llm(String prompt) {
        return Future.succeededFuture("ok");
      }
    };
  }

  long lastSearchNanos() {
    return lastSearchNanos.get();
  }

  /** One direct SearchService search, as the callback makes it; milliseconds. */
  double directSearch() {
    long start = System.nanoTime();
    int n = stack.search().search(tenant, new SearchRequest(QUERY, 5, null)).await().size();
    if (n == 0) {
      throw new IllegalStateException("the bench corpus returned no hits for '" + QUERY + "'");
    }
    return (System.nanoTime() - start) / 1e6;
  }

  static CellOutcome run(SandboxSession session, String code, CellOptions options) {
    CellOutcome outcome = session.execute(code, options, CellListener.NONE).await();
    if (!outcome.success()) {
      throw new IllegalStateException("cell failed: " + outcome.toToolResult().encode());
    }
    return outcome;
  }

  @Override
  public void close() throws Exception {
    try {
      stack.close();
    } finally {
      db.close();
    }
  }

  private static void deleteTree(Path dir) throws java.io.IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (var walk = Files.walk(dir)) {
      for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
