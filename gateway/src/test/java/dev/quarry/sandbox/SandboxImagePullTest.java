package dev.quarry.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.AuthConfig;
import dev.quarry.api.TestGateway;
import dev.quarry.support.Await;
import dev.quarry.support.LocalRegistry;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * A Kubernetes pod's engine starts without the sandbox image: the gateway pulls it from the
 * registry its name holds. Here the registry is a real one (Debian's docker-registry, behind basic
 * authentication) holding the runner image under a name the engine does not have.
 */
@DisplayName("An engine without the sandbox image: the gateway pulls it from a real registry, and is ready only once a sandbox started")
class SandboxImagePullTest {
  private static final String USER = "quarry-pull";
  private static final String PASSWORD = "pw-" + UUID.randomUUID();
  @TempDir static Path tmp;
  static LocalRegistry registry;
  static String image;
  static DockerClient docker;

  @BeforeAll
  static void pushImage() throws Exception {
    registry = LocalRegistry.start(tmp.resolve("registry"), USER, PASSWORD);
    image = registry.address() + "/quarry-sandbox-pull-test:" + UUID.randomUUID().toString().substring(0, 8);
    registry.push(RunnerImage.ensure(), image);
    LocalRegistry.removeLocally(image);
    docker = ContainerLauncher.connect(SandboxSettings.DEFAULT_DOCKER_HOST);
  }

  @AfterAll
  static void tearDown() throws Exception {
    try {
      LocalRegistry.removeLocally(image);
      docker.close();
    } finally {
      registry.close();
    }
  }

  @Test
  @DisplayName("with the registry's entry in a docker config JSON: pulls, logs and counts it, turns ready, runs a program; an image taken away is pulled again")
  void pullsWithDockerConfig() throws Exception {
    assertThat(present(image)).as("the engine lacks the image before the gateway starts").isFalse();
    Path config = tmp.resolve("dockerconfigjson");
    String auth = Base64.getEncoder().encodeToString((USER + ":" + PASSWORD).getBytes(StandardCharsets.UTF_8));
    Files.writeString(config, new JsonObject().put("auths", new JsonObject()
        .put("registry.example.com", new JsonObject().put("auth", "d3Jvbmc6d3Jvbmc="))
        .put("http://" + registry.address() + "/v2/", new JsonObject().put("auth", auth))).encode());
    ListAppender<ILoggingEvent> logs = capture();
    try (TestGateway gateway = TestGateway.start(settings("config").withPull(
        new ImagePull("", "", config, Duration.ofSeconds(120))))) {
      Await.until(() -> ready(gateway).statusCode() == 200, Duration.ofMinutes(2), "the gateway ready: " + body(gateway));
      assertThat(present(image)).isTrue();
      JsonObject sandboxes = check(gateway, "sandboxes");
      assertThat(sandboxes.getBoolean("ok")).isTrue();
      assertThat(sandboxes.getString("detail")).contains(image).contains("a probe sandbox started in");
      assertThat(pulls(gateway, "success")).isEqualTo(1);
      assertThat(pulls(gateway, "failure")).isZero();
      assertThat(messages(logs)).anyMatch(m -> m.contains("pulling it from " + registry.address())
              && m.contains("QUARRY_SANDBOX_REGISTRY_CONFIG"))
          .anyMatch(m -> m.startsWith("pulled sandbox image " + image + " from " + registry.address()))
          .anyMatch(m -> m.contains("a probe sandbox of " + image))
          .noneMatch(m -> m.contains(PASSWORD) || m.contains(auth));

      HttpResponse<Buffer> run = gateway.client().post("/v1/executions")
          .sendJsonObject(new JsonObject().put("code", "print('from the registry', 6 * 7)")).await();
      assertThat(run.statusCode()).as(run.bodyAsString()).isEqualTo(200);
      assertThat(run.bodyAsJsonObject().getString("stdout")).isEqualTo("from the registry 42\n");

      // The image leaves the engine: the next probe of readiness finds it gone, then it is pulled again.
      LocalRegistry.removeLocally(image);
      HttpResponse<Buffer> unready = ready(gateway);
      assertThat(unready.statusCode()).isEqualTo(503);
      assertThat(unready.bodyAsJsonObject().getJsonObject("checks").getJsonObject("sandboxes").getString("detail"))
          .contains("sandbox image " + image + " is not in the Docker engine");
      Await.until(() -> ready(gateway).statusCode() == 200, Duration.ofMinutes(2), "ready again: " + body(gateway));
      assertThat(pulls(gateway, "success")).isEqualTo(2);
    } finally {
      release(logs);
    }
  }

  @Test
  @DisplayName("with a wrong password: stays unready, saying which image, which registry, as whom and what the registry answered; nothing started")
  void wrongPassword() throws Exception {
    LocalRegistry.removeLocally(image);
    SandboxSettings settings = settings("wrong").withPull(new ImagePull(USER, "not-" + PASSWORD, null, Duration.ofSeconds(60)));
    try (TestGateway gateway = TestGateway.start(settings)) {
      Await.until(() -> pulls(gateway, "failure") >= 1, Duration.ofMinutes(1), "a failed pull");
      HttpResponse<Buffer> r = ready(gateway);
      assertThat(r.statusCode()).isEqualTo(503);
      JsonObject sandboxes = r.bodyAsJsonObject().getJsonObject("checks").getJsonObject("sandboxes");
      assertThat(sandboxes.getBoolean("ok")).isFalse();
      assertThat(sandboxes.getString("detail"))
          .contains("sandbox image " + image + " is not in the Docker engine, and pulling it from " + registry.address()
              + " as " + USER + " (QUARRY_SANDBOX_REGISTRY_USERNAME) failed")
          .containsIgnoringCase("unauthorized")
          .contains("next attempt in")
          .doesNotContain(PASSWORD);
      assertThat(r.bodyAsJsonObject().getJsonObject("checks").getJsonObject("docker").getBoolean("ok")).isTrue();
      assertThat(pulls(gateway, "success")).isZero();
      assertThat(present(image)).isFalse();
      assertThat(docker.listContainersCmd().withShowAll(true)
          .withLabelFilter(Map.of(ContainerLauncher.LABEL_GATEWAY, settings.gatewayId())).exec()).isEmpty();
    }
  }

  @Test
  @DisplayName("credentials: the user name and password win, else the config's entry for the image's registry (keys with scheme and path, Docker Hub's), else none; a bad config names the file")
  void credentials() throws Exception {
    assertThat(ImagePull.registry("quarry-sandbox:latest")).isEqualTo("docker.io");
    assertThat(ImagePull.registry("acme/quarry-sandbox")).isEqualTo("docker.io");
    assertThat(ImagePull.registry("localhost/quarry-sandbox")).isEqualTo("localhost");
    assertThat(ImagePull.registry("127.0.0.1:5000/a/b:1")).isEqualTo("127.0.0.1:5000");
    assertThat(ImagePull.registry("registry.example.com/quarry/sandbox@sha256:00")).isEqualTo("registry.example.com");
    assertThat(SandboxHealth.repositoryAndTag("127.0.0.1:5000/a/b:1")).containsExactly("127.0.0.1:5000/a/b", "1");
    assertThat(SandboxHealth.repositoryAndTag("127.0.0.1:5000/a/b")).containsExactly("127.0.0.1:5000/a/b", "latest");
    assertThat(SandboxHealth.repositoryAndTag("r.io/a@sha256:ab")).containsExactly("r.io/a", "sha256:ab");
    assertThat(List.of(1, 2, 3, 5, 6, 20).stream().map(SandboxHealth::backoff).map(Duration::toSeconds).toList())
        .containsExactly(5L, 10L, 20L, 80L, 120L, 120L);

    Path config = tmp.resolve("config-dir");
    Files.createDirectories(config);
    Files.writeString(config.resolve("config.json"), """
        {"auths": {"https://index.docker.io/v1/": {"username": "hub", "password": "h"},
                   "registry.example.com": {"auth": "%s"},
                   "tokens.example.com": {"identitytoken": "tok"}}}
        """.formatted(Base64.getEncoder().encodeToString("u:p:with:colons".getBytes(StandardCharsets.UTF_8))));
    ImagePull fromFile = new ImagePull("", "", config, ImagePull.DEFAULT_TIMEOUT);
    AuthConfig hub = fromFile.auth("acme/sandbox:1");
    assertThat(hub.getUsername()).isEqualTo("hub");
    AuthConfig example = fromFile.auth("registry.example.com/quarry/sandbox:1");
    assertThat(example.getUsername()).isEqualTo("u");
    assertThat(example.getPassword()).isEqualTo("p:with:colons");
    assertThat(example.getRegistryAddress()).isEqualTo("registry.example.com");
    assertThat(fromFile.auth("tokens.example.com/sandbox").getIdentitytoken()).isEqualTo("tok");
    assertThat(fromFile.auth("other.example.com/sandbox")).isNull();
    assertThat(new ImagePull("me", "secret", config, ImagePull.DEFAULT_TIMEOUT).auth("registry.example.com/s").getUsername())
        .isEqualTo("me");
    assertThat(ImagePull.ANONYMOUS.auth("registry.example.com/s")).isNull();

    Files.writeString(config.resolve("config.json"), "{not json");
    assertThatThrownBy(() -> fromFile.auth("registry.example.com/s")).hasMessageContaining(config.resolve("config.json").toString())
        .hasMessageContaining("QUARRY_SANDBOX_REGISTRY_CONFIG");
    assertThatThrownBy(() -> new ImagePull("me", "", null, ImagePull.DEFAULT_TIMEOUT).auth("registry.example.com/s"))
        .hasMessageContaining("QUARRY_SANDBOX_REGISTRY_USERNAME and QUARRY_SANDBOX_REGISTRY_PASSWORD go together,"
            + " and only the user name is given");
  }

  private static SandboxSettings settings(String name) {
    return SandboxSettings.fromEnv(Map.of("QUARRY_GATEWAY_ID", "pull-" + name + "-" + UUID.randomUUID().toString().substring(0, 6)))
        .withImage(image).withRunRoot(tmp.resolve("run-" + name)).withPoolPerTenant(0);
  }

  private static boolean present(String name) {
    try {
      docker.inspectImageCmd(name).exec();
      return true;
    } catch (NotFoundException e) {
      return false;
    }
  }

  private static HttpResponse<Buffer> ready(TestGateway gateway) {
    return gateway.bareClient().get("/readyz").send().await();
  }

  private static String body(TestGateway gateway) {
    return ready(gateway).bodyAsString();
  }

  private static JsonObject check(TestGateway gateway, String name) {
    return ready(gateway).bodyAsJsonObject().getJsonObject("checks").getJsonObject(name);
  }

  private static long pulls(TestGateway gateway, String outcome) {
    String scrape = gateway.metricsClient().get("/metrics").send().await().bodyAsString();
    Matcher m = Pattern.compile("(?m)^quarry_sandbox_image_pulls_total\\{outcome=\"" + outcome + "\"} ([0-9.]+)$")
        .matcher(scrape);
    assertThat(m.find()).as("quarry_sandbox_image_pulls_total{outcome=%s} in the scrape", outcome).isTrue();
    return (long) Double.parseDouble(m.group(1));
  }

  private static ListAppender<ILoggingEvent> capture() {
    ListAppender<ILoggingEvent> appender = new ListAppender<>();
    appender.start();
    Logger logger = (Logger) LoggerFactory.getLogger(SandboxHealth.class);
    // The tests' logback configuration keeps INFO back; what is asserted here is INFO.
    logger.setLevel(ch.qos.logback.classic.Level.INFO);
    logger.addAppender(appender);
    return appender;
  }

  private static void release(ListAppender<ILoggingEvent> appender) {
    Logger logger = (Logger) LoggerFactory.getLogger(SandboxHealth.class);
    logger.detachAppender(appender);
    logger.setLevel(null);
  }

  private static List<String> messages(ListAppender<ILoggingEvent> appender) {
    return List.copyOf(appender.list).stream().map(ILoggingEvent::getFormattedMessage).toList();
  }
}
