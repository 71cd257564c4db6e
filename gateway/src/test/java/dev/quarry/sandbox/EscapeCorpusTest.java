package dev.quarry.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.callbacks.Llm;
import dev.quarry.callbacks.TenantCallbacks;
import dev.quarry.callbacks.TokenAccount;
import dev.quarry.search.QueryRules;
import dev.quarry.ingest.IngestRequest;
import dev.quarry.ingest.IngestService;
import dev.quarry.search.OnnxEmbedder;
import dev.quarry.search.SearchService;
import dev.quarry.store.Database;
import dev.quarry.store.DocumentStore;
import dev.quarry.store.DocumentsFs;
import dev.quarry.support.SharedData;
import dev.quarry.support.TestDatabase;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Every payload of the shared escape corpus, each in a fresh real sandbox through
 * {@link SandboxService}, meets its {@code expect}. Two canaries are planted: a secret in the
 * gateway's own environment (surefire sets {@value #ENV_CANARY_NAME}) and a document of another
 * tenant; neither, nor anything else of the other tenant, may appear in any output, error, callback
 * argument or callback result. After the run no container, socket or directory is left behind.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class EscapeCorpusTest {
  static final String ENV_CANARY_NAME = "QUARRY_CANARY_SECRET";
  /** Long enough for a callback or a small file walk on a busy 2-core machine, short enough for a 55-payload run. */
  private static final long WALL_TIME_MS = 4_000;
  /** The most a cell may take past its wall time before its outcome arrives: the hard kill and removal. */
  private static final Duration GRACE = Duration.ofSeconds(45);
  private static final Duration OPEN_TIMEOUT = Duration.ofSeconds(60);
  private static final String PROBE = "x = 41\nx + 1";

  private TestDatabase db;
  private Vertx vertx;
  private Pool pool;
  private SearchService search;
  private DocumentStore documents;
  private SandboxService service;
  private SandboxSettings settings;
  private Path dataDir;
  private Path runRoot;
  private String envCanary;
  private String otherCanary;
  private final UUID tenant = UUID.randomUUID();
  private final UUID otherTenant = UUID.randomUUID();
  private UUID otherDocument;
  private Map<String, Long> documentsBefore;

  @BeforeAll
  void start() throws Exception {
    envCanary = System.getenv(ENV_CANARY_NAME);
    // A canary that is not planted proves nothing: say so rather than pass.
    assertThat(envCanary).as("surefire must set " + ENV_CANARY_NAME + " (gateway/pom.xml)").isNotBlank();
    otherCanary = "CANARY-OTHER-TENANT-" + UUID.randomUUID();

    db = TestDatabase.create();
    try (java.sql.Connection c = db.jdbc();
        java.sql.PreparedStatement s = c.prepareStatement("INSERT INTO tenants (id, name) VALUES (?, ?)")) {
      for (UUID t : List.of(tenant, otherTenant)) {
        s.setObject(1, t);
        s.setString(2, "escape-" + t);
        s.executeUpdate();
      }
    }
    vertx = Vertx.vertx();
    pool = Database.pool(vertx, db.config());
    dataDir = Files.createTempDirectory("quarry-escape");
    runRoot = Files.createDirectories(dataDir.resolve("run"));
    OnnxEmbedder embedder = new OnnxEmbedder();
    DocumentsFs fs = new DocumentsFs(vertx, pool, dataDir.resolve("documents"));
    IngestService ingest = new IngestService(vertx, pool, embedder, fs, db.config());
    search = new SearchService(vertx, pool, embedder, db.config());
    db.prepare(vertx, search);
    documents = new DocumentStore(pool, fs);

    ingest.ingest(tenant, text("report.md", "# Invoice report\n\nThe invoice total for March was 1,200 euros, paid late.\n"))
        .await();
    otherDocument = ingest.ingest(otherTenant, text("secret.md",
        "# Invoice of the other tenant\n\nThe invoice says " + otherCanary + " and nothing else.\n")).await().documentId();
    fs.sync(otherTenant).await();
    documentsBefore = snapshot(fs.sync(tenant).await());

    settings = new SandboxSettings(SandboxSettings.DEFAULT_DOCKER_HOST, RunnerImage.ensure(), List.of(), "",
        "escape-" + UUID.randomUUID().toString().substring(0, 8), runRoot, SandboxLimits.DEFAULTS,
        SandboxLimits.MAXIMUMS, 2, Duration.ofMinutes(10), false);
    service = new SandboxService(vertx, settings, new TenantTrees(fs.root(), fs::sync, (t, work) -> fs.sync(t, work::use)));
    service.start().await();
  }

  private static IngestRequest text(String name, String content) {
    return new IngestRequest(name, "test://" + name, null, "text/markdown", content.getBytes(StandardCharsets.UTF_8));
  }

  /** {@code errorType}: the project corpus says how a payload must fail; null where it does not. */
  record Payload(String id, String category, String expect, String code, String errorType) {}

  static List<Payload> corpus() throws IOException {
    return corpus(SharedData.path("escape-corpus.dev.json"));
  }

  /** The project's own corpus, grown with each class of escape found (issue 14: the language boundary). */
  static List<Payload> projectCorpus() throws IOException {
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      Path file = dir.resolve("sandbox-image/runner/tests/escape-corpus.quarry.json");
      if (Files.exists(file)) {
        return corpus(file);
      }
    }
    throw new IllegalStateException("sandbox-image/runner/tests/escape-corpus.quarry.json not found");
  }

  private static List<Payload> corpus(Path file) throws IOException {
    JsonArray all = new JsonArray(Files.readString(file));
    List<Payload> out = new ArrayList<>();
    for (int i = 0; i < all.size(); i++) {
      JsonObject p = all.getJsonObject(i);
      out.add(new Payload(p.getString("id"), p.getString("category"), p.getString("expect"), p.getString("code"),
          p.getString("error_type")));
    }
    return out;
  }

  @Test
  @Order(1)
  void theCorpusIsTheFullDevCorpus() throws IOException {
    List<Payload> corpus = corpus();
    assertThat(corpus).hasSize(55);
    assertThat(corpus).extracting(Payload::expect).containsOnly("must_fail", "must_be_contained");
  }

  @TestFactory
  @Order(2)
  Stream<DynamicTest> everyPayloadMeetsItsExpectation() throws IOException {
    // -Descape.only=RC-01,RD-01 narrows a run to some payloads while working on them.
    List<String> only = List.of(System.getProperty("escape.only", "").split(",")).stream()
        .filter(id -> !id.isBlank()).toList();
    return corpus().stream().filter(p -> only.isEmpty() || only.contains(p.id())).map(p -> DynamicTest.dynamicTest(p.id() + " " + p.category() + " " + p.expect(),
        () -> runPayload(p)));
  }

  @TestFactory
  @Order(2)
  Stream<DynamicTest> everyPayloadOfTheProjectCorpusMeetsItsExpectation() throws IOException {
    return projectCorpus().stream().map(p -> DynamicTest.dynamicTest(p.id() + " " + p.category() + " " + p.expect(),
        () -> runPayload(p)));
  }

  private void runPayload(Payload payload) throws Exception {
    Recorder recorder = new Recorder();
    SandboxSession session = open(recorder.wrap(callbacks()));
    CellOutcome outcome;
    try {
      CellOptions options = new CellOptions(WALL_TIME_MS, settings.limits().outputChars(), List.of());
      outcome = session.execute(payload.code(), options, recorder).toCompletionStage().toCompletableFuture()
          .get(WALL_TIME_MS + GRACE.toMillis(), TimeUnit.MILLISECONDS);
    } finally {
      session.close().await();
    }
    System.out.printf("escape %s %s -> %s %s (%d ms)%n", payload.id(), payload.expect(), outcome.status(),
        outcome.error() == null ? "" : outcome.error().type() + ": " + abbreviate(outcome.error().message()),
        outcome.durationMs());
    String everything = outcome.toToolResult().encode() + "\n" + recorder.seen();
    assertThat(everything).as("the gateway's environment leaked").doesNotContain(envCanary);
    assertThat(everything).as("another tenant's document leaked")
        .doesNotContain(otherCanary).doesNotContain(otherTenant.toString()).doesNotContain(otherDocument.toString());
    assertThat(everything).as("/etc/passwd leaked").doesNotContain("root:x:0:0");

    if (payload.expect().equals("must_fail")) {
      assertThat(outcome.success()).as("must fail: %s", outcome.toToolResult()).isFalse();
      assertThat(outcome.error()).isNotNull();
      assertThat(outcome.error().type()).isNotBlank();
      if (payload.errorType() != null) {
        assertThat(outcome.error().type()).as("how %s must fail: %s", payload.id(), outcome.toToolResult())
            .isEqualTo(payload.errorType());
      }
    } else {
      // Contained: it ended (the get above), and either completed or ended with a typed error.
      if (!outcome.success()) {
        assertThat(outcome.error()).as("contained: %s", outcome.toToolResult()).isNotNull();
        assertThat(outcome.error().type()).isNotBlank();
      }
    }
    assertThat(outcome.toToolResult().encode()).as("no Java stack trace reaches the code")
        .doesNotContain("at dev.quarry.").doesNotContain("java.lang.");

    assertThat(snapshot(dataDir.resolve("documents").resolve(tenant.toString())))
        .as("the tenant's documents are unchanged").isEqualTo(documentsBefore);
    assertThat(containersOf(Map.of(ContainerLauncher.LABEL_SANDBOX_ID, session.id())))
        .as("the payload's container is removed").isEmpty();
    assertThat(runRoot.resolve(settings.gatewayId()).resolve(session.id())).as("its run directory is removed")
        .doesNotExist();

    // The next sandbox starts clean and the gateway carries on.
    SandboxSession next = open(callbacks());
    try {
      CellOutcome probe = next.execute(PROBE, CellOptions.defaults(settings), CellListener.NONE)
          .toCompletionStage().toCompletableFuture().get(GRACE.toMillis(), TimeUnit.MILLISECONDS);
      assertThat(probe.success()).as("a fresh sandbox after %s: %s", payload.id(), probe.toToolResult()).isTrue();
      assertThat(probe.stdout()).contains("42");
    } finally {
      next.close().await();
    }
  }

  @Test
  @Order(3)
  void nothingIsLeftBehindOnceTheServiceCloses() throws IOException {
    service.close().await();
    assertThat(service.active()).isZero();
    assertThat(containersOf(Map.of(ContainerLauncher.LABEL_GATEWAY, settings.gatewayId()))).isEmpty();
    Path runDirs = runRoot.resolve(settings.gatewayId());
    if (Files.isDirectory(runDirs)) {
      try (Stream<Path> s = Files.list(runDirs)) {
        assertThat(s.toList()).as("sockets and run directories left").isEmpty();
      }
    }
  }

  /**
   * The gateway's own callbacks, bound to the sandbox's tenant: what the code gets, and all it gets.
   * The model is the one stand-in: no model is reachable here, so llm answers with a fixed text.
   */
  private Callbacks callbacks() {
    return new TenantCallbacks(tenant, Scope.ALL, search, documents, QueryRules.of(db.config()),
        (prompt, deadline) -> Future.succeededFuture(new Llm.Reply("a fixed answer of the model stand-in", 0, 0)),
        TokenAccount.unmetered(), dev.quarry.callbacks.CallbackTurns.unmetered(), () -> java.time.Instant.MAX);
  }

  private List<String> containersOf(Map<String, String> labels) {
    try (var docker = ContainerLauncher.connect(settings.dockerHost())) {
      return docker.listContainersCmd().withShowAll(true).withLabelFilter(labels).exec().stream()
          .map(c -> c.getId()).toList();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Relative path to size of every file under {@code dir}. */
  private static Map<String, Long> snapshot(Path dir) throws IOException {
    Map<String, Long> out = new TreeMap<>();
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path p : walk.filter(Files::isRegularFile).toList()) {
        out.put(dir.relativize(p).toString(), Files.size(p));
      }
    }
    return out;
  }

  @AfterAll
  void stop() throws IOException {
    try {
      if (service != null) {
        service.close().await();
      }
      if (pool != null) {
        pool.close().await();
      }
      if (vertx != null) {
        vertx.close().await();
      }
    } finally {
      if (db != null) {
        db.close();
      }
      if (dataDir != null) {
        try (Stream<Path> walk = Files.walk(dataDir)) {
          walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
      }
    }
  }

  /** Everything the code saw or sent: outputs, callback arguments and callback results. */
  private static final class Recorder implements CellListener {
    private final StringBuffer seen = new StringBuffer();

    @Override
    public void output(CellListener.Stream channel, String text) {
      seen.append(text);
    }

    @Override
    public void callback(CallbackType kind, CallbackArguments arguments) {
      seen.append('\n').append(kind).append(' ').append(arguments.preview().encode()).append('\n');
    }

    @Override
    public void fileRead(String path) {
      seen.append("\nread ").append(path).append('\n');
    }

    String seen() {
      return seen.toString();
    }

    Callbacks wrap(Callbacks inner) {
      return new Callbacks() {
        @Override
        public Future<JsonArray> search(String query, int limit) {
          return inner.search(query, limit).onSuccess(r -> seen.append("\nsearch result ").append(r.encode()));
        }

        @Override
        public Future<JsonArray> listDocuments() {
          return inner.listDocuments().onSuccess(r -> seen.append("\ndocuments ").append(r.encode()));
        }

        @Override
        public Future<String> llm(String prompt) {
          return inner.llm(prompt).onSuccess(r -> seen.append("\nllm ").append(r));
        }
      };
    }
  }

  private static String abbreviate(String s) {
    return s.length() <= 160 ? s : s.substring(0, 160) + "...";
  }

  /** A session, failing the case (not hanging the run) when no sandbox comes up in time. */
  private SandboxSession open(Callbacks callbacks) throws Exception {
    return service.open(tenant, Scope.ALL, callbacks).toCompletionStage().toCompletableFuture()
        .get(OPEN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
  }
}
