package dev.quarry.support;

import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real image registry for a test: Debian's {@code docker-registry} (the distribution registry,
 * 2.8) on a free loopback port, its storage in the test's directory, behind basic authentication
 * (an htpasswd file made with {@code htpasswd -B}, as the registry requires bcrypt). The engine
 * pulls from a loopback registry over plain HTTP without being told to. Images are pushed with the
 * docker CLI, logged in with a docker config of the test's own (never the machine's).
 */
public final class LocalRegistry implements AutoCloseable {
  private final Process process;
  private final int port;
  private final Path dockerConfig;
  private final Path log;

  private LocalRegistry(Process process, int port, Path dockerConfig, Path log) {
    this.process = process;
    this.port = port;
    this.dockerConfig = dockerConfig;
    this.log = log;
  }

  /** Starts one in {@code dir} that admits {@code user} with {@code password}; returns once it answers. */
  public static LocalRegistry start(Path dir, String user, String password) throws IOException {
    Files.createDirectories(dir);
    Path htpasswd = dir.resolve("htpasswd");
    Files.writeString(htpasswd, run(List.of("htpasswd", "-nbB", user, password), Map.of()));
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    Path config = dir.resolve("config.yml");
    Files.writeString(config, """
        version: 0.1
        log: {level: warn}
        storage: {filesystem: {rootdirectory: %s}}
        http: {addr: "127.0.0.1:%d", secret: local-test-registry}
        auth: {htpasswd: {realm: quarry-test, path: %s}}
        """.formatted(dir.resolve("storage"), port, htpasswd));
    Path log = dir.resolve("registry.log");
    Process p = new ProcessBuilder("docker-registry", "serve", config.toString())
        .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    LocalRegistry registry = new LocalRegistry(p, port, Files.createDirectories(dir.resolve("docker-config")), log);
    try {
      Await.until(() -> !p.isAlive() || registry.answers(), Duration.ofSeconds(30), "the registry on port " + port);
      if (!p.isAlive()) {
        throw new IllegalStateException("docker-registry exited: " + Files.readString(log));
      }
      run(List.of("docker", "login", "--username", user, "--password-stdin", registry.address()),
          Map.of("DOCKER_CONFIG", registry.dockerConfig.toString()), password);
    } catch (RuntimeException | IOException e) {
      registry.close();
      throw e;
    }
    return registry;
  }

  /** {@code 127.0.0.1:<port>}, the registry part of an image name. */
  public String address() {
    return "127.0.0.1:" + port;
  }

  /** Pushes the engine's {@code source} image as {@code target} (a name in this registry). */
  public void push(String source, String target) throws IOException {
    run(List.of("docker", "tag", source, target), Map.of());
    run(List.of("docker", "push", "-q", target), Map.of("DOCKER_CONFIG", dockerConfig.toString()));
  }

  /** Takes the name off the engine's image (the image stays while another name has it). */
  public static void removeLocally(String image) throws IOException {
    try {
      run(List.of("docker", "image", "rm", image), Map.of());
    } catch (IllegalStateException e) {
      if (!String.valueOf(e.getMessage()).contains("No such image")) {
        throw e;
      }
    }
  }

  private boolean answers() {
    try {
      HttpURLConnection c = (HttpURLConnection) URI.create("http://" + address() + "/v2/").toURL().openConnection();
      c.setConnectTimeout(1000);
      c.setReadTimeout(1000);
      int status = c.getResponseCode();
      c.disconnect();
      return status == 401 || status == 200;
    } catch (IOException e) {
      return false;
    }
  }

  private static String run(List<String> command, Map<String, String> env) throws IOException {
    return run(command, env, null);
  }

  private static String run(List<String> command, Map<String, String> env, String stdin) throws IOException {
    ProcessBuilder pb = new ProcessBuilder(new ArrayList<>(command)).redirectErrorStream(true);
    pb.environment().putAll(env);
    Process p = pb.start();
    if (stdin != null) {
      p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
    }
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    try {
      if (!p.waitFor(5, TimeUnit.MINUTES) || p.exitValue() != 0) {
        throw new IllegalStateException(String.join(" ", command) + " failed: " + out);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted: " + command, e);
    }
    return out;
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** What the registry logged (for a failing test's message). */
  public String log() throws IOException {
    return Files.readString(log);
  }
}
