package dev.quarry.api;

import dev.quarry.support.Await;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.Container;
import dev.quarry.sandbox.ContainerLauncher;
import dev.quarry.sandbox.RunnerImage;
import dev.quarry.sandbox.SandboxLimits;
import dev.quarry.sandbox.SandboxSettings;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Deleting a tenant removes its sandboxes at once, with real containers: the warm ones and the one
 * running an execution, which ends with the typed error {@code TenantDeleted}; none comes back.
 */
@DisplayName("DELETE /v1/admin/tenants/{id} removes the tenant's sandboxes, warm and running, at once")
class TenantDeletionSandboxesTest {
  @TempDir static Path tmp;
  static TestGateway gateway;
  static DockerClient docker;
  static SandboxSettings settings;

  @BeforeAll
  static void setUp() throws Exception {
    String image = RunnerImage.ensure();
    Path runRoot = Files.createDirectories(tmp.resolve("run"));
    // Two warm sandboxes per tenant; a reaper that would not come round during the test.
    settings = new SandboxSettings(SandboxSettings.DEFAULT_DOCKER_HOST, image, List.of(), "",
        "test-" + UUID.randomUUID().toString().substring(0, 8), runRoot, SandboxLimits.DEFAULTS,
        SandboxLimits.MAXIMUMS, 2, Duration.ofHours(1), false);
    docker = ContainerLauncher.connect(SandboxSettings.DEFAULT_DOCKER_HOST);
    gateway = TestGateway.start(settings);
  }

  @AfterAll
  static void tearDown() throws Exception {
    if (gateway != null) {
      gateway.close();
    }
    assertThat(containers(Map.of(ContainerLauncher.LABEL_GATEWAY, settings.gatewayId()))).isEmpty();
    docker.close();
  }

  static List<Container> containers(Map<String, String> labels) {
    return docker.listContainersCmd().withShowAll(true).withLabelFilter(labels).exec();
  }

  static List<Container> of(UUID tenant) {
    return containers(Map.of(ContainerLauncher.LABEL_GATEWAY, settings.gatewayId(),
        ContainerLauncher.LABEL_TENANT, tenant.toString()));
  }

  @Test
  @DisplayName("warm and running sandboxes go before the 204; the running execution ends TenantDeleted; no refill")
  void deletingATenantRemovesItsSandboxes() throws Exception {
    TestGateway.NewTenant doomed = gateway.createTenant("doomed");
    TestGateway.NewTenant bystander = gateway.createTenant("bystander");
    gateway.gateway().sandboxes().warm(doomed.id()).await(60, TimeUnit.SECONDS);
    gateway.gateway().sandboxes().warm(bystander.id()).await(60, TimeUnit.SECONDS);
    assertThat(of(doomed.id())).hasSize(2);

    // An execution that runs until its wall time, in one of the doomed tenant's sandboxes.
    Future<HttpResponse<Buffer>> running = gateway.clientFor(doomed.apiKey()).post("/v1/executions")
        .timeout(120_000)
        .sendJsonObject(new JsonObject().put("code", "n = 0\nwhile True:\n    n = n + 1")
            .put("limits", new JsonObject().put("wall_time_ms", 60_000)));
    Await.until(() -> gateway.gateway().sandboxes().active() >= 1, Duration.ofSeconds(60),
        "the execution's session to open");

    HttpResponse<Buffer> deleted = gateway.admin().delete("/v1/admin/tenants/" + doomed.id()).send().await();
    assertThat(deleted.statusCode()).as(deleted.bodyAsString()).isEqualTo(204);
    assertThat(of(doomed.id())).as("the deleted tenant's containers, when the 204 came").isEmpty();

    HttpResponse<Buffer> ended = running.await(60, TimeUnit.SECONDS);
    assertThat(ended.statusCode()).as(ended.bodyAsString()).isEqualTo(200);
    JsonObject result = ended.bodyAsJsonObject();
    assertThat(result.getBoolean("success")).isFalse();
    assertThat(result.getJsonObject("error").getString("type")).isEqualTo("TenantDeleted");

    // Nothing refills the deleted tenant's pool; the other tenant keeps its warm sandboxes.
    assertThat(of(doomed.id())).isEmpty();
    assertThat(gateway.gateway().sandboxes().liveSandboxIds()).hasSize(2);
    assertThat(of(bystander.id())).hasSize(2);
    assertThat(gateway.clientFor(doomed.apiKey()).get("/v1/documents").send().await().statusCode()).isEqualTo(401);
  }
}
