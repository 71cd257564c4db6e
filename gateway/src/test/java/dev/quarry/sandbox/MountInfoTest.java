package dev.quarry.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quarry.api.TestGateway;
import dev.quarry.config.Config;
import dev.quarry.gateway.Gateway;
import dev.quarry.gateway.OpsSettings;
import dev.quarry.telemetry.QuarryMetrics;
import dev.quarry.support.Await;
import dev.quarry.support.TestDatabase;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;

import dev.quarry.sandbox.ContainerLauncher.ExecResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code /proc/self/mountinfo} inside a real sandbox shows of the host: with the documents
 * and run directories on filesystems of their own (here tmpfs, as README's security section asks),
 * no host path of either; on the host's root filesystem, their full host paths (which is what
 * {@link MountPrivacy} reports, the gateway's readiness says, and {@code require} refuses). The
 * layout every test gateway has ({@link TestGateway}) is checked through a real execution's
 * sandbox. Mounting needs root, as {@code ./quarry test} runs.
 */
@DisplayName("A sandbox's mountinfo and the host paths of the gateway's directories")
class MountInfoTest {
  @TempDir static Path tmp;
  static SandboxFixture fx;
  static Path privateData;
  static Path privateRun;
  static final UUID TENANT = UUID.randomUUID();

  @BeforeAll
  static void setUp() throws Exception {
    fx = new SandboxFixture(tmp);
    privateData = Files.createDirectories(tmp.resolve("private-data"));
    privateRun = Files.createDirectories(tmp.resolve("private-run"));
    mountTmpfs(privateData);
    mountTmpfs(privateRun);
    Path doc = Files.createDirectories(privateData.resolve("documents").resolve(TENANT.toString()).resolve("doc"));
    Files.writeString(doc.resolve("content.txt"), "a document");
    run("chmod", "-R", "a+rX", privateData.toString(), tmp.toString());
  }

  @AfterAll
  static void tearDown() throws Exception {
    try {
      assertThat(fx.containers()).as("containers left behind").isEmpty();
    } finally {
      fx.close();
      run("umount", privateData.toString());
      run("umount", privateRun.toString());
    }
  }

  private static void mountTmpfs(Path dir) throws Exception {
    assertThat(run("mount", "-t", "tmpfs", "-o", "size=16m,mode=755", "tmpfs", dir.toString()))
        .as("mounting a tmpfs (the test runs as root, as ./quarry test does)").isZero();
  }

  private static int run(String... command) throws IOException, InterruptedException {
    return new ProcessBuilder(command).inheritIO().start().waitFor();
  }

  private static String mountinfo(ContainerLauncher launcher, Sandbox s) {
    ExecResult r = launcher.exec(s, List.of("cat", "/proc/self/mountinfo"), Duration.ofSeconds(30));
    assertThat(r.exitCode()).as(r.stderr()).isZero();
    return r.stdout();
  }

  @Test
  @DisplayName("documents and run directories on filesystems of their own: mountinfo shows no host path of either")
  void ownFilesystems() throws Exception {
    SandboxSettings base = fx.settings();
    ContainerLauncher launcher = new ContainerLauncher(fx.docker, new SandboxSettings(base.dockerHost(), base.image(),
        base.command(), base.user(), base.gatewayId(), privateRun, base.limits(), base.maxLimits(), 0,
        base.reapInterval(), false));
    Sandbox s = launcher.launch(TENANT, privateData.resolve("documents").resolve(TENANT.toString()));
    try {
      String info = mountinfo(launcher, s);
      assertThat(info).contains(" /documents ").contains(" /run/quarry ")
          .doesNotContain(tmp.toString()).doesNotContain(tmp.toRealPath().toString())
          .doesNotContain(privateData.toString()).doesNotContain(privateRun.toString());
      // What shows instead: the paths below the gateway's own directories, nothing of the host's.
      assertThat(info).contains("/documents/" + TENANT + " /documents ");
      assertThat(MountPrivacy.hostPathShown(privateData.resolve("documents"), privateData)).isNull();
      assertThat(MountPrivacy.hostPathShown(privateRun, privateRun)).isNull();
    } finally {
      launcher.remove(s);
    }
  }

  @Test
  @DisplayName("the tests' gateway layout: a sandbox of a real execution shows no host path of the data or run directory")
  void testGatewayLayout() throws Exception {
    SandboxSettings settings = new SandboxSettings(SandboxSettings.DEFAULT_DOCKER_HOST, RunnerImage.ensure(),
        List.of(), "", "mounts-" + UUID.randomUUID().toString().substring(0, 8), tmp.resolve("gateway-run"),
        SandboxLimits.DEFAULTS, SandboxLimits.MAXIMUMS, 1, Duration.ofMinutes(10), false);
    try (TestGateway gateway = TestGateway.start(settings)) {
      HttpResponse<Buffer> r = gateway.client().post("/v1/executions")
          .sendJsonObject(new JsonObject().put("code", "print(len(await list_documents()))")).await();
      assertThat(r.statusCode()).as(r.bodyAsString()).isEqualTo(200);
      assertThat(r.bodyAsJsonObject().getBoolean("success")).as(r.bodyAsString()).isTrue();
      // The warm pool refills for the tenant: that sandbox's view is what the next execution gets.
      Await.until(() -> !running(settings.gatewayId()).isEmpty(), Duration.ofSeconds(60), "a warm sandbox");
      String id = running(settings.gatewayId()).get(0).getId();
      String info = dockerExec(id, "cat", "/proc/self/mountinfo");
      assertThat(info).contains(" /documents ").contains(" /run/quarry ")
          .doesNotContain(gateway.dataDir().toString()).doesNotContain(gateway.dataDir().toRealPath().toString())
          .doesNotContain(settings.runRoot().toString()).doesNotContain(tmp.toString());
      assertThat(info).containsPattern("/documents/[0-9a-f-]{36} /documents ")
          .containsPattern("/" + settings.gatewayId() + "/[^ ]+ /run/quarry ");
      HttpResponse<Buffer> ready = gateway.bareClient().get("/readyz").send().await();
      assertThat(ready.bodyAsJsonObject().getJsonObject("checks").getJsonObject("sandbox_mounts").getBoolean("ok"))
          .as(ready.bodyAsString()).isTrue();
    }
    assertThat(running(settings.gatewayId())).as("sandboxes left behind").isEmpty();
  }

  @Test
  @DisplayName("QUARRY_SANDBOX_MOUNT_PRIVACY=require: a gateway whose directories are on the host's filesystem refuses to start, naming them")
  void requireRefuses() throws Exception {
    Path data = Files.createDirectories(tmp.resolve("host-data"));
    Path runDir = Files.createDirectories(tmp.resolve("host-run"));
    try (TestDatabase db = TestDatabase.create()) {
      Config config = db.config().withDataDir(data).withHttpPort(0);
      SandboxSettings settings = fx.settings().withRunRoot(runDir).withMountPolicy(MountPrivacy.Policy.REQUIRE);
      QuarryMetrics metrics = new QuarryMetrics();
      Vertx vertx = Gateway.vertx(metrics);
      try {
        assertThatThrownBy(() -> vertx.deployVerticle(new Gateway(config, OpsSettings.DEFAULTS, metrics,
            new Gateway.AgentWiring(null, settings))).await())
            .hasMessageContaining("QUARRY_SANDBOX_MOUNT_PRIVACY=require")
            .hasMessageContaining("QUARRY_DATA_DIR shows as " + data.toRealPath().resolve("documents"))
            .hasMessageContaining("QUARRY_SANDBOX_RUN_DIR shows as " + runDir.toRealPath());
      } finally {
        vertx.close().await();
      }
    }
    assertThat(MountPrivacy.Policy.fromEnv(null)).isEqualTo(MountPrivacy.Policy.WARN);
    assertThat(MountPrivacy.Policy.fromEnv("require")).isEqualTo(MountPrivacy.Policy.REQUIRE);
    assertThatThrownBy(() -> MountPrivacy.Policy.fromEnv("yes")).hasMessageContaining("QUARRY_SANDBOX_MOUNT_PRIVACY=yes");
  }

  private static List<com.github.dockerjava.api.model.Container> running(String gatewayId) {
    return fx.docker.listContainersCmd().withLabelFilter(java.util.Map.of(ContainerLauncher.LABEL_GATEWAY, gatewayId))
        .withStatusFilter(List.of("running")).exec();
  }

  private static String dockerExec(String container, String... command) throws Exception {
    Process p = new ProcessBuilder(java.util.stream.Stream.concat(java.util.stream.Stream.of("docker", "exec",
        container), java.util.Arrays.stream(command)).toList()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    assertThat(p.waitFor()).as(out).isZero();
    return out;
  }

  @Test
  @DisplayName("on the host's own filesystem: mountinfo shows the host paths, and MountPrivacy says which")
  void hostFilesystem() throws Exception {
    ContainerLauncher launcher = fx.launcher();
    Sandbox s = launcher.launch(fx.tenantA, fx.documents(fx.tenantA));
    try {
      String info = mountinfo(launcher, s);
      String hostDocuments = fx.documents(fx.tenantA).toRealPath().toString();
      assertThat(info).contains(hostDocuments);
      assertThat(MountPrivacy.hostPathShown(fx.documentsRoot, tmp)).isEqualTo(fx.documentsRoot.toRealPath().toString());
      assertThat(MountPrivacy.hostPathShown(fx.runRoot, fx.runRoot)).isEqualTo(fx.runRoot.toRealPath().toString());
    } finally {
      launcher.remove(s);
    }
  }
}
