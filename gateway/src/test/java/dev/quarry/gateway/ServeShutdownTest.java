package dev.quarry.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.support.TestDatabase;
import io.vertx.core.json.JsonObject;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayName("quarry serve as a process: settings from a file, JSON logs, SIGTERM drains and exits 0")
class ServeShutdownTest {
  private static final Pattern LISTENING = Pattern.compile("listening on http://localhost:(\\d+)");

  @TempDir Path dir;

  @Test
  @DisplayName("SIGTERM makes the gateway drain and exit with status 0")
  void sigtermExitsZero() throws Exception {
    try (TestDatabase db = TestDatabase.create()) {
      Path configFile = Files.writeString(dir.resolve("quarry.yaml"),
          "QUARRY_HTTP_PORT: 0\nQUARRY_METRICS_PORT: 0\nQUARRY_DRAIN_GRACE_SECONDS: 5\nQUARRY_DATA_DIR: " + dir.resolve("data") + "\n"
              // The model's settings come from the same file as every other (they were once read
              // from the bare environment only, and silently ignored here).
              + "QUARRY_MODEL_BASE_URL: http://127.0.0.1:9/v1\nQUARRY_MODEL: model-named-in-the-file\n");
      Process gateway = serve(Map.of(
          "QUARRY_CONFIG_FILE", configFile.toString(),
          "QUARRY_PG_DATABASE", db.config().pgDatabase()),
          // Into a file: a pipe nobody reads would block the gateway once it fills.
          ProcessBuilder.Redirect.to(dir.resolve("stderr.txt").toFile()));
      List<String> output = new CopyOnWriteArrayList<>();
      CompletableFuture<Integer> port = new CompletableFuture<>();
      Thread reader = Thread.ofPlatform().daemon().start(() -> readLines(gateway, output, port));
      try {
        int bound = port.get(120, TimeUnit.SECONDS);
        HttpResponse<String> ready = HttpClient.newHttpClient().send(
            HttpRequest.newBuilder(URI.create("http://localhost:" + bound + "/readyz")).build(),
            HttpResponse.BodyHandlers.ofString());
        assertThat(ready.statusCode()).as(ready.body()).isEqualTo(200);
        assertThat(new JsonObject(ready.body()).getJsonObject("checks").getJsonObject("model").getString("detail"))
            .isEqualTo("configured: model-named-in-the-file");

        gateway.destroy(); // SIGTERM
        assertThat(gateway.waitFor(60, TimeUnit.SECONDS)).as("exited").isTrue();
        reader.join(Duration.ofSeconds(10));
        assertThat(gateway.exitValue()).as(String.join("\n", output)).isZero();
      } finally {
        gateway.destroyForcibly();
      }
      List<JsonObject> logs = new ArrayList<>();
      for (String line : output) {
        if (line.startsWith("{")) {
          logs.add(new JsonObject(line));
        }
      }
      assertThat(logs).as("JSON log lines").anySatisfy(l -> {
        assertThat(l.getString("loggerName")).isEqualTo(Gateway.class.getName());
        assertThat(l.getString("formattedMessage")).startsWith("Quarry gateway listening on port");
      });
      assertThat(Files.readString(dir.resolve("stderr.txt")))
          .contains("quarry: stopping: draining running work, then requests", "quarry: stopped cleanly");
    }
  }

  @Test
  @DisplayName("SIGTERM while a long document is being embedded: the ingest finishes (its result, the"
      + " document stored), then the gateway exits 0 (no native crash: the signal is drained before the"
      + " JVM's shutdown hooks, ONNX Runtime's among them, run)")
  void sigtermLetsAnIngestFinish() throws Exception {
    try (TestDatabase db = TestDatabase.create()) {
      String token = "serve-test-admin-token-0123456789";
      Path configFile = Files.writeString(dir.resolve("quarry.yaml"),
          "QUARRY_HTTP_PORT: 0\nQUARRY_METRICS_PORT: 0\nQUARRY_DRAIN_GRACE_SECONDS: 120\nQUARRY_DATA_DIR: "
              + dir.resolve("data") + "\nQUARRY_ADMIN_TOKEN: " + token + "\n");
      Process gateway = serve(Map.of("QUARRY_CONFIG_FILE", configFile.toString(),
          "QUARRY_PG_DATABASE", db.config().pgDatabase()), ProcessBuilder.Redirect.to(dir.resolve("stderr.txt").toFile()));
      List<String> output = new CopyOnWriteArrayList<>();
      CompletableFuture<Integer> port = new CompletableFuture<>();
      Thread reader = Thread.ofPlatform().daemon().start(() -> readLines(gateway, output, port));
      try {
        String base = "http://localhost:" + port.get(120, TimeUnit.SECONDS);
        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<String> tenant = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/admin/tenants"))
            .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{\"name\": \"drained\"}")).build(),
            HttpResponse.BodyHandlers.ofString());
        assertThat(tenant.statusCode()).as(tenant.body()).isEqualTo(201);
        String key = new JsonObject(tenant.body()).getString("api_key");
        StringBuilder md = new StringBuilder("# Harbour log\n\n");
        for (int i = 0; i < 150; i++) {
          md.append("## Day ").append(i).append("\n\n")
              .append(("The quay flooded at the spring tide of day " + i + " and the ferry waited. ").repeat(12))
              .append("\n\n");
        }
        String body = new JsonObject().put("uri", "log.md").put("content_type", "text/markdown")
            .put("content", md.toString()).encode();
        HttpResponse<java.util.stream.Stream<String>> ingest = http.send(
            HttpRequest.newBuilder(URI.create(base + "/v1/documents")).header("Authorization", "Bearer " + key)
                .header("Content-Type", "application/json").header("Accept", "text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofLines());
        assertThat(ingest.statusCode()).isEqualTo(200);
        List<String> events = new ArrayList<>();
        ingest.body().forEach(line -> {
          if (line.startsWith("event: ")) {
            events.add(line.substring(7));
            if (line.equals("event: embedded") && events.stream().filter("embedded"::equals).count() == 1) {
              gateway.destroy(); // SIGTERM, with the first batch of chunks embedded and the rest to go
            }
          } else if (line.startsWith("data: ") && "result".equals(events.get(events.size() - 1))) {
            events.add(new JsonObject(line.substring(6)).getString("status"));
          }
        });
        assertThat(events).as("the ingest's events").contains("embedded").endsWith("result", "created");
        assertThat(events.stream().filter("embedded"::equals).count()).as("batches embedded").isGreaterThan(2);
        assertThat(gateway.waitFor(120, TimeUnit.SECONDS)).as("exited").isTrue();
        reader.join(Duration.ofSeconds(10));
        assertThat(gateway.exitValue()).as(String.join("\n", output)).isZero();
        assertThat(Path.of("hs_err_pid" + gateway.pid() + ".log")).as("a JVM crash log").doesNotExist();
      } finally {
        gateway.destroyForcibly();
      }
      try (var c = db.jdbc(); var st = c.createStatement();
          var rs = st.executeQuery("SELECT count(*) FROM documents WHERE uri = 'log.md'")) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getLong(1)).as("the document stored").isEqualTo(1);
      }
    }
  }

  @Test
  @DisplayName("a bad setting stops start-up with status 2 and a message naming it")
  void badSetting() throws Exception {
    Process gateway = serve(Map.of("QUARRY_PG_POOL_SIZE", "0"), ProcessBuilder.Redirect.PIPE);
    try {
      String stderr = new String(gateway.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(gateway.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(gateway.exitValue()).isEqualTo(2);
      assertThat(stderr).contains("error: QUARRY_PG_POOL_SIZE=0 is out of bounds [1, 200]");
    } finally {
      gateway.destroyForcibly();
    }
    Process sandboxes = serve(Map.of("QUARRY_SANDBOX_MAX_ACTIVE", "0"), ProcessBuilder.Redirect.PIPE);
    try {
      String stderr = new String(sandboxes.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(sandboxes.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(sandboxes.exitValue()).isEqualTo(2);
      assertThat(stderr).contains("error: QUARRY_SANDBOX_MAX_ACTIVE=0 is out of bounds [1, 1024]");
    } finally {
      sandboxes.destroyForcibly();
    }
  }

  @Test
  @DisplayName("a bad agent setting, in the environment or the file, stops start-up the same way")
  void badAgentSetting() throws Exception {
    Path configFile = Files.writeString(dir.resolve("bad.yaml"), "QUARRY_ANALYSIS_ON_DISCONNECT: shrug\n");
    for (Map<String, String> env : List.of(Map.of("QUARRY_MODEL_TEMPERATURE", "3"),
        Map.of("QUARRY_CONFIG_FILE", configFile.toString()))) {
      Process gateway = serve(env, ProcessBuilder.Redirect.PIPE);
      try {
        String stderr = new String(gateway.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(gateway.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(gateway.exitValue()).as(stderr).isEqualTo(2);
        assertThat(stderr).containsAnyOf("error: QUARRY_MODEL_TEMPERATURE=3 is out of bounds [0.0, 2.0]",
            "error: QUARRY_ANALYSIS_ON_DISCONNECT=shrug must be one of finish, cancel").doesNotContain("Exception");
      } finally {
        gateway.destroyForcibly();
      }
    }
  }

  private Process serve(Map<String, String> env, ProcessBuilder.Redirect stderr) throws IOException {
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    // The production logging configuration, not the tests' (logback-test.xml is on this classpath).
    Path logback = Path.of("target/classes/logback.xml").toAbsolutePath();
    ProcessBuilder builder = new ProcessBuilder(java.toString(),
        "-Dlogback.configurationFile=" + logback, "--enable-native-access=ALL-UNNAMED",
        "-cp", System.getProperty("java.class.path"), "dev.quarry.cli.Main", "serve");
    builder.environment().keySet().removeIf(k -> k.startsWith("QUARRY_"));
    builder.environment().putAll(env);
    builder.environment().put("QUARRY_LOG_FORMAT", "json");
    builder.redirectError(stderr);
    Process p = builder.start();
    p.getOutputStream().close();
    return p;
  }

  private static void readLines(Process p, List<String> output, CompletableFuture<Integer> port) {
    try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        output.add(line);
        Matcher m = LISTENING.matcher(line);
        if (m.find()) {
          port.complete(Integer.parseInt(m.group(1)));
        }
      }
      port.completeExceptionally(new IllegalStateException("the gateway ended before it listened: " + output));
    } catch (IOException e) {
      port.completeExceptionally(e);
    }
  }
}
