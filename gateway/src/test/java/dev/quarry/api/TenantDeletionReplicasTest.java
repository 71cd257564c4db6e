package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.Container;
import dev.quarry.gateway.Gateway;
import dev.quarry.gateway.OpsSettings;
import dev.quarry.telemetry.QuarryMetrics;
import dev.quarry.sandbox.ContainerLauncher;
import dev.quarry.sandbox.MountPrivacy;
import dev.quarry.sandbox.RunnerImage;
import dev.quarry.sandbox.SandboxLimits;
import dev.quarry.sandbox.SandboxService;
import dev.quarry.sandbox.SandboxSettings;
import dev.quarry.sandbox.Scope;
import dev.quarry.support.Await;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import dev.quarry.search.SearchService;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Two replicas on one database, each with its own engine-side sandboxes (real containers): a
 * tenant deleted through replica A loses its sandboxes on replica B too, warm and running, at once
 * by A's notification (B's tenant check, {@link SandboxService#TENANT_CHECK}, catching a missed one);
 * B's sandboxes of another tenant stay.
 */
@DisplayName("A tenant deleted through one replica loses its sandboxes on the others")
class TenantDeletionReplicasTest {
  static TestGateway a;
  static Vertx vertxB;
  static Gateway b;
  static SandboxSettings settingsB;
  static DockerClient docker;

  @BeforeAll
  static void setUp() throws Exception {
    String image = RunnerImage.ensure();
    SandboxSettings settingsA = new SandboxSettings(SandboxSettings.DEFAULT_DOCKER_HOST, image, List.of(), "",
        "test-a-" + UUID.randomUUID().toString().substring(0, 8), Path.of("set-below"), SandboxLimits.DEFAULTS,
        SandboxLimits.MAXIMUMS, 0, Duration.ofHours(1), false);
    a = TestGateway.startWithAgent(dataDir -> new Gateway.AgentWiring(null,
        settingsA.withRunRoot(dataDir.resolve("run-a"))));
    // Replica B: the same database and data directory (its own tmpfs), its own gateway id and sockets.
    settingsB = new SandboxSettings(SandboxSettings.DEFAULT_DOCKER_HOST, image, List.of(), "",
        "test-b-" + UUID.randomUUID().toString().substring(0, 8), a.dataDir().resolve("run-b"),
        SandboxLimits.DEFAULTS, SandboxLimits.MAXIMUMS, 1, Duration.ofHours(1), false)
        .withMountPolicy(MountPrivacy.Policy.REQUIRE);
    QuarryMetrics metrics = new QuarryMetrics();
    vertxB = Gateway.vertx(metrics);
    b = new Gateway(a.config(), OpsSettings.DEFAULTS, metrics, new Gateway.AgentWiring(null, settingsB));
    vertxB.deployVerticle(b).await();
    docker = ContainerLauncher.connect(SandboxSettings.DEFAULT_DOCKER_HOST);
  }

  @AfterAll
  static void tearDown() throws Exception {
    try {
      if (vertxB != null) {
        vertxB.close().await();
      }
      if (a != null) {
        a.close();
      }
      assertThat(onB(null)).as("replica B's containers after it stopped").isEmpty();
    } finally {
      docker.close();
    }
  }

  /** Replica B's containers, of one tenant or (null) all. */
  static List<Container> onB(UUID tenant) {
    Map<String, String> labels = tenant == null ? Map.of(ContainerLauncher.LABEL_GATEWAY, settingsB.gatewayId())
        : Map.of(ContainerLauncher.LABEL_GATEWAY, settingsB.gatewayId(), ContainerLauncher.LABEL_TENANT,
            tenant.toString());
    return docker.listContainersCmd().withShowAll(true).withLabelFilter(labels).exec();
  }

  @Test
  @DisplayName("DELETE on A: B's warm sandbox and the one running B's execution go, the execution ends TenantDeleted, a late write is 401")
  void deletionReachesTheOtherReplica() throws Exception {
    TestGateway.NewTenant doomed = a.createTenant("doomed-elsewhere");
    TestGateway.NewTenant bystander = a.createTenant("bystander-elsewhere");
    b.sandboxes().warm(doomed.id()).await(60, TimeUnit.SECONDS);
    b.sandboxes().warm(bystander.id()).await(60, TimeUnit.SECONDS);
    assertThat(onB(doomed.id())).hasSize(1);

    WebClient clientB = WebClient.create(vertxB, new WebClientOptions().setDefaultHost("localhost")
        .setDefaultPort(b.port()));
    Future<HttpResponse<Buffer>> running = clientB.post("/v1/executions").timeout(120_000)
        .putHeader("Authorization", "Bearer " + doomed.apiKey())
        .sendJsonObject(new JsonObject().put("code", "n = 0\nwhile True:\n    n = n + 1")
            .put("limits", new JsonObject().put("wall_time_ms", 60_000)));
    Await.until(() -> b.sandboxes().active() >= 1, Duration.ofSeconds(60), "B's execution session to open");

    HttpResponse<Buffer> deleted = a.admin().delete("/v1/admin/tenants/" + doomed.id()).send().await();
    assertThat(deleted.statusCode()).as(deleted.bodyAsString()).isEqualTo(204);
    // B still has the key in its cache (10 s): a write it lets through meets the deleted tenant in the
    // database, and is refused as the key would be, not a 500 (found attacking a running gateway).
    HttpResponse<Buffer> late = clientB.post("/v1/documents").putHeader("Authorization", "Bearer " + doomed.apiKey())
        .sendJsonObject(new JsonObject().put("title", "late").put("uri", "notes://late")
            .put("content", "# Late\n\nA write after the deletion.\n").put("content_type", "text/markdown")).await();
    assertThat(late.statusCode()).as(late.bodyAsString()).isEqualTo(401);

    Await.until(() -> onB(doomed.id()).isEmpty(), SandboxService.TENANT_CHECK.multipliedBy(4),
        "the deleted tenant's containers on replica B to go");
    HttpResponse<Buffer> ended = running.await(60, TimeUnit.SECONDS);
    assertThat(ended.statusCode()).as(ended.bodyAsString()).isEqualTo(200);
    assertThat(ended.bodyAsJsonObject().getJsonObject("error").getString("type"))
        .as(ended.bodyAsString()).isEqualTo("TenantDeleted");

    // B neither refills the deleted tenant's pool nor opens a sandbox for it; the other tenant's stays.
    assertThatThrownBy(() -> b.sandboxes().open(doomed.id(), Scope.ALL, null).await())
        .hasMessageContaining("was deleted");
    assertThat(onB(doomed.id())).isEmpty();
    assertThat(onB(bystander.id())).hasSize(1);
    clientB.close();
  }

  @Test
  @DisplayName("DELETE on A: B forgets the deleted tenant's search copies at once (A's notification), and"
      + " keeps another tenant's")
  void deletionFreesTheOtherReplicasSearchCopies() throws Exception {
    TestGateway.NewTenant kept = a.createTenant("copies-kept");
    TestGateway.NewTenant doomed = a.createTenant("copies-doomed");
    WebClient clientB = WebClient.create(vertxB, new WebClientOptions().setDefaultHost("localhost")
        .setDefaultPort(b.port()));
    double keptBytes = copiedOnB(clientB, kept, 0);
    double bothBytes = copiedOnB(clientB, doomed, keptBytes);

    assertThat(bothBytes).isGreaterThan(keptBytes);
    HttpResponse<Buffer> deleted = a.admin().delete("/v1/admin/tenants/" + doomed.id()).send().await();
    assertThat(deleted.statusCode()).as(deleted.bodyAsString()).isEqualTo(204);
    // Not B's next tenant check (SearchService.TENANT_CHECK, the fallback): the deletion's notification.
    Await.until(() -> gaugeOnB("quarry_search_term_index_bytes") == keptBytes,
        SearchService.TENANT_CHECK.dividedBy(2), "replica B to forget the deleted tenant's copies");
  }

  /** Ingests through A, then searches through B until B holds the tenant's copies; B's copies' bytes then. */
  private static double copiedOnB(WebClient clientB, TestGateway.NewTenant tenant, double before) {
    HttpResponse<Buffer> ingested = a.clientFor(tenant.apiKey()).post("/v1/documents").sendJsonObject(new JsonObject()
        .put("title", "Tides").put("uri", "tides.md").put("content_type", "text/markdown")
        .put("content", "# Tides\n\nThe harbour floods twice a day; the quay is under water at spring tides.\n"))
        .await();
    assertThat(ingested.statusCode()).as(ingested.bodyAsString()).isEqualTo(201);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!(gaugeOnB("quarry_search_term_index_bytes") > before && gaugeOnB("quarry_search_copy_builds") == 0)) {
      assertThat(System.nanoTime()).as("B's copies of the tenant built within a minute").isLessThan(deadline);
      HttpResponse<Buffer> searched = clientB.post("/v1/search").putHeader("Authorization", "Bearer " + tenant.apiKey())
          .sendJsonObject(new JsonObject().put("query", "when does the quay flood")).await();
      assertThat(searched.statusCode()).as(searched.bodyAsString()).isEqualTo(200);
    }
    return gaugeOnB("quarry_search_term_index_bytes");
  }

  private static double gaugeOnB(String name) {
    return b.metrics().registry().get(name).gauge().value();
  }
}
