package dev.quarry.support;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.Container;
import dev.quarry.config.Config;
import dev.quarry.sandbox.ContainerLauncher;
import dev.quarry.sandbox.SandboxSettings;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A cluster of gateways on this machine, for tests and benchmarks of what replicas share: N gateway
 * processes ({@code dev.quarry.cli.Main serve}, configured through the environment as a deployment
 * is), each with its own API and metrics ports, its own data and run directories (tmpfs mounts, as
 * {@link PrivateMounts} makes them) and gateway id, on one throwaway database and the local Docker
 * engine, behind a real load balancer: Debian's HAProxy ({@code scripts/setup.sh} installs it) on
 * loopback, round robin, checking each replica's {@code /readyz} every half second (three failed
 * checks, or five seconds without an answer on a loaded machine, take a replica out).
 *
 * <p>A replica can be killed ({@code kill -9}: nothing it holds is given back, as when a node is
 * lost), stopped (SIGTERM: it drains) and started again on the same ports, directories and id.
 * Clients go through the balancer ({@link #balancerUrl}) or to one replica ({@link #replicaUrl}).
 *
 * <p>The processes run the classes under test (this JVM's class path, without test classes): in
 * {@code mvn install} the tests run before the jar is packaged, and a jar left by an earlier build
 * would test old code. {@code -Dquarry.cluster.jar=PATH} runs {@code java -jar PATH serve} instead.
 * Ports come from {@code -Dquarry.cluster.ports=FROM-TO} when given (a range set aside for this
 * checkout), else from the kernel's free ones. Each process' output goes to a log file named in
 * every failure.
 */
public final class GatewayCluster implements AutoCloseable {
  public static final String ADMIN_TOKEN = "cluster-admin-token-0123456789";
  private static final Duration START_LIMIT = Duration.ofMinutes(3);

  private final TestDatabase database;
  private final Path root;
  private final PrivateMounts mounts = new PrivateMounts();
  private final List<Replica> replicas = new ArrayList<>();
  private final Map<String, String> env;
  private final String name = "cluster-" + UUID.randomUUID().toString().substring(0, 8);
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private Process balancer;
  private int balancerPort;
  private Path balancerLog;

  /** One gateway process and what it keeps across restarts. */
  private final class Replica {
    final int index;
    final String gatewayId;
    final int port;
    final int metricsPort;
    final Path dataDir;
    final Path runDir;
    final Path log;
    Process process;

    Replica(int index) throws IOException {
      this.index = index;
      this.gatewayId = name + "-r" + index;
      this.port = Ports.next();
      this.metricsPort = Ports.next();
      Path dir = Files.createDirectories(root.resolve("r" + index));
      this.dataDir = mounts.ensure(dir.resolve("data"));
      this.runDir = mounts.ensure(dir.resolve("run"), dataDir);
      this.log = root.resolve("r" + index + ".log");
    }

    void start() throws IOException {
      ProcessBuilder pb = new ProcessBuilder(command()).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
      // This JVM's environment without its Quarry and model settings: the cluster's own are given below.
      pb.environment().keySet().removeIf(k -> k.startsWith("QUARRY_") || k.startsWith("OPENAI_"));
      pb.environment().putAll(env);
      pb.environment().put("QUARRY_HTTP_PORT", Integer.toString(port));
      pb.environment().put("QUARRY_METRICS_PORT", Integer.toString(metricsPort));
      pb.environment().put("QUARRY_DATA_DIR", dataDir.toString());
      pb.environment().put("QUARRY_SANDBOX_RUN_DIR", runDir.toString());
      pb.environment().put("QUARRY_GATEWAY_ID", gatewayId);
      process = pb.start();
    }

    void awaitReady() {
      Await.until(() -> {
        if (!process.isAlive()) {
          throw new IllegalStateException("replica " + index + " exited with " + process.exitValue()
              + " while starting; see " + log);
        }
        return get(port, "/readyz") == 200;
      }, START_LIMIT, "replica " + index + " to be ready (its log: " + log + ")");
    }
  }

  private GatewayCluster(TestDatabase database, Map<String, String> env) throws IOException {
    this.database = database;
    this.root = Files.createTempDirectory("quarry-cluster");
    this.env = env;
  }

  /** How a cluster is made: the number of replicas and the settings they all get. */
  public static final class Builder {
    private int replicas = 3;
    private final Map<String, String> env = new LinkedHashMap<>();

    /** How many gateway processes (default 3). */
    public Builder replicas(int n) {
      if (n < 1) {
        throw new IllegalArgumentException("a cluster has at least one replica, got " + n);
      }
      this.replicas = n;
      return this;
    }

    /** A setting every replica gets, as the environment variable of the README's table. */
    public Builder setting(String name, String value) {
      env.put(name, value);
      return this;
    }

    /** Starts the database, the replicas (all ready) and the balancer; everything goes on close. */
    public GatewayCluster start() throws IOException {
      TestDatabase database = TestDatabase.create();
      Config c = database.config();
      Map<String, String> all = new LinkedHashMap<>();
      all.put("QUARRY_PG_HOST", c.pgHost());
      all.put("QUARRY_PG_PORT", Integer.toString(c.pgPort()));
      all.put("QUARRY_PG_DATABASE", c.pgDatabase());
      all.put("QUARRY_PG_USER", c.pgUser());
      all.put("QUARRY_PG_PASSWORD", c.pgPassword());
      all.put("QUARRY_PG_APP_USER", c.pgAppUser());
      all.put("QUARRY_PG_APP_PASSWORD", c.pgAppPassword());
      // Three gateways and the other suites share the test PostgreSQL's 200 connections.
      all.put("QUARRY_PG_POOL_SIZE", "6");
      all.put("QUARRY_ADMIN_TOKEN", ADMIN_TOKEN);
      all.put("QUARRY_SANDBOX_MOUNT_PRIVACY", "require");
      all.put("QUARRY_SANDBOX_POOL_PER_TENANT", "0");
      all.put("QUARRY_LOG_FORMAT", "text");
      all.put("QUARRY_DRAIN_GRACE_SECONDS", "5");
      all.putAll(env);
      GatewayCluster cluster = new GatewayCluster(database, all);
      try {
        for (int i = 0; i < replicas; i++) {
          cluster.replicas.add(cluster.new Replica(i));
        }
        // The first replica migrates the new database alone (replicas migrating one empty database at
        // once can race on creating the same table); the others start once it is ready.
        cluster.replicas.get(0).start();
        cluster.replicas.get(0).awaitReady();
        for (Replica r : cluster.replicas.subList(1, cluster.replicas.size())) {
          r.start();
        }
        for (Replica r : cluster.replicas) {
          r.awaitReady();
        }
        cluster.startBalancer();
        return cluster;
      } catch (IOException | RuntimeException e) {
        cluster.close();
        throw e;
      }
    }
  }

  public static Builder builder() {
    return new Builder();
  }

  private List<String> command() {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> command = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED",
        "--sun-misc-unsafe-memory-access=allow", "-Xmx768m", "-XX:+UseSerialGC"));
    String jar = System.getProperty("quarry.cluster.jar");
    if (jar != null && !jar.isBlank()) {
      command.addAll(List.of("-jar", jar, "serve"));
    } else {
      command.addAll(List.of("-cp", classPath(), "dev.quarry.cli.Main", "serve"));
    }
    return command;
  }

  /** This JVM's class path without test classes (their logging configuration is the tests'). */
  private static String classPath() {
    String cp = System.getProperty("java.class.path");
    return Stream.of(cp.split(java.io.File.pathSeparator))
        .filter(e -> !e.endsWith("test-classes") && !e.endsWith("-tests.jar") && !e.contains("surefire"))
        .reduce((a, b) -> a + java.io.File.pathSeparator + b)
        .orElseThrow(() -> new IllegalStateException("no class path to run the gateway with"));
  }

  private void startBalancer() throws IOException {
    balancerPort = Ports.next();
    StringBuilder cfg = new StringBuilder("""
        global
          maxconn 4096
        defaults
          mode http
          timeout connect 2s
          timeout client 5m
          timeout server 5m
          timeout tunnel 5m
          timeout check 5s
          retries 2
          option redispatch
        frontend quarry
        """);
    cfg.append("  bind 127.0.0.1:").append(balancerPort).append('\n');
    cfg.append("  default_backend gateways\nbackend gateways\n  balance roundrobin\n  option httpchk GET /readyz\n");
    for (Replica r : replicas) {
      cfg.append("  server r").append(r.index).append(" 127.0.0.1:").append(r.port)
          .append(" check port ").append(r.metricsPort).append(" inter 500ms fall 3 rise 1\n");
    }
    Path file = root.resolve("haproxy.cfg");
    Files.writeString(file, cfg.toString());
    balancerLog = root.resolve("haproxy.log");
    balancer = new ProcessBuilder("haproxy", "-db", "-f", file.toString()).redirectErrorStream(true)
        .redirectOutput(balancerLog.toFile()).start();
    Await.until(() -> {
      if (!balancer.isAlive()) {
        throw new IllegalStateException("HAProxy exited (is it installed? scripts/setup.sh installs it); see "
            + balancerLog);
      }
      return get(balancerPort, "/healthz") == 200;
    }, Duration.ofSeconds(30), "HAProxy to serve on 127.0.0.1:" + balancerPort + " (its log: " + balancerLog + ")");
  }

  /** The load balancer's base URL: a client there reaches whichever replica it picks. */
  public String balancerUrl() {
    return "http://127.0.0.1:" + balancerPort;
  }

  public int balancerPort() {
    return balancerPort;
  }

  /** One replica's own base URL. */
  public String replicaUrl(int index) {
    return "http://127.0.0.1:" + replicas.get(index).port;
  }

  public int replicaPort(int index) {
    return replicas.get(index).port;
  }

  public int metricsPort(int index) {
    return replicas.get(index).metricsPort;
  }

  public int size() {
    return replicas.size();
  }

  /** The replica's QUARRY_GATEWAY_ID (its containers carry it). */
  public String gatewayId(int index) {
    return replicas.get(index).gatewayId;
  }

  public Path log(int index) {
    return replicas.get(index).log;
  }

  public TestDatabase database() {
    return database;
  }

  /** The replica's process id (its CPU time, a thread dump). */
  public long pid(int index) {
    return replicas.get(index).process.pid();
  }

  public boolean alive(int index) {
    Process p = replicas.get(index).process;
    return p != null && p.isAlive();
  }

  /** {@code kill -9}: the replica gives nothing back and records nothing, as when its node is lost. */
  public void kill(int index) throws InterruptedException {
    Process p = replicas.get(index).process;
    p.destroyForcibly();
    p.waitFor(30, TimeUnit.SECONDS);
  }

  /** SIGTERM, and waits for the drained exit; its status. */
  public int stop(int index) throws InterruptedException {
    Process p = replicas.get(index).process;
    p.destroy();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly().waitFor();
      return -1;
    }
    return p.exitValue();
  }

  /** Starts a stopped or killed replica again (same ports, directories and id) and waits until it is ready. */
  public void restart(int index) throws IOException {
    Replica r = replicas.get(index);
    if (r.process != null && r.process.isAlive()) {
      throw new IllegalStateException("replica " + index + " is running");
    }
    r.start();
    r.awaitReady();
  }

  /** The status of a GET, 0 when nothing answers. */
  private int get(int port, String path) {
    try {
      return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
          .timeout(Duration.ofSeconds(5)).GET().build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    } catch (IOException e) {
      return 0;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 0;
    }
  }

  /** A JSON request through the balancer with the given bearer credential: its status and body. */
  public Response send(String method, String path, String bearer, String json) {
    return send(balancerUrl(), method, path, bearer, json);
  }

  /** A JSON request to one base URL (the balancer's or a replica's), answered within a minute. */
  public Response send(String baseUrl, String method, String path, String bearer, String json) {
    return send(baseUrl, method, path, bearer, json, Duration.ofSeconds(60));
  }

  /** A JSON request to one base URL, answered within {@code timeout} (a status 0 when it is not). */
  public Response send(String baseUrl, String method, String path, String bearer, String json, Duration timeout) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(timeout)
        .method(method, json == null ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8));
    if (json != null) {
      b.header("Content-Type", "application/json");
    }
    if (bearer != null) {
      b.header("Authorization", "Bearer " + bearer);
    }
    try {
      HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
      return new Response(r.statusCode(), r.body());
    } catch (IOException e) {
      return new Response(0, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Response(0, "interrupted");
    }
  }

  public record Response(int status, String body) {
    public io.vertx.core.json.JsonObject json() {
      return new io.vertx.core.json.JsonObject(body);
    }
  }

  /** A tenant made through the admin API (via the balancer): its id and first key. */
  public record Tenant(UUID id, String apiKey) {}

  public Tenant createTenant(String tenantName) {
    Response r = send("POST", "/v1/admin/tenants", ADMIN_TOKEN,
        new io.vertx.core.json.JsonObject().put("name", tenantName).encode());
    if (r.status() != 201) {
      throw new IllegalStateException("creating tenant " + tenantName + ": " + r.status() + " " + r.body());
    }
    return new Tenant(UUID.fromString(r.json().getString("id")), r.json().getString("api_key"));
  }

  /** Sets a tenant's own quotas through the admin API, e.g. {@code {"requests_per_minute": 120}}. */
  public void setQuotas(UUID tenant, io.vertx.core.json.JsonObject quotas) {
    Response r = send("PUT", "/v1/admin/tenants/" + tenant + "/quotas", ADMIN_TOKEN, quotas.encode());
    if (r.status() != 200) {
      throw new IllegalStateException("setting quotas of " + tenant + ": " + r.status() + " " + r.body());
    }
  }

  /** Containers of this cluster's replicas on the engine (all states), of one replica or (-1) all. */
  public List<Container> containers(DockerClient docker, int index) {
    List<Container> out = new ArrayList<>();
    for (Replica r : replicas) {
      if (index < 0 || r.index == index) {
        out.addAll(docker.listContainersCmd().withShowAll(true)
            .withLabelFilter(Map.of(ContainerLauncher.LABEL_GATEWAY, r.gatewayId)).exec());
      }
    }
    return out;
  }

  /**
   * Stops the balancer and every replica (SIGTERM, then SIGKILL after a minute), removes what a killed
   * replica left on the engine (this cluster's containers only), unmounts, drops the database.
   */
  @Override
  public void close() throws IOException {
    try {
      if (balancer != null) {
        balancer.destroy();
        balancer.waitFor(10, TimeUnit.SECONDS);
        balancer.destroyForcibly();
      }
      for (Replica r : replicas) {
        if (r.process != null && r.process.isAlive()) {
          r.process.destroy();
        }
      }
      for (Replica r : replicas) {
        if (r.process != null && !r.process.waitFor(60, TimeUnit.SECONDS)) {
          r.process.destroyForcibly().waitFor();
        }
      }
      try (DockerClient docker = ContainerLauncher.connect(SandboxSettings.DEFAULT_DOCKER_HOST)) {
        for (Container c : containers(docker, -1)) {
          docker.removeContainerCmd(c.getId()).withForce(true).exec();
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      database.close();
      mounts.close();
      try (Stream<Path> walk = Files.walk(root)) {
        walk.sorted(Comparator.reverseOrder()).filter(p -> !p.toString().endsWith(".log")).forEach(p -> p.toFile().delete());
      }
    }
  }

  /** Ports for the cluster's processes: from {@code quarry.cluster.ports} when set, else free ones. */
  static final class Ports {
    private static int next = -1;

    static synchronized int next() {
      String range = System.getProperty("quarry.cluster.ports", "");
      if (range.isBlank()) {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
          return s.getLocalPort();
        } catch (IOException e) {
          throw new IllegalStateException("no free port", e);
        }
      }
      String[] bounds = range.split("-");
      int from = Integer.parseInt(bounds[0].strip());
      int to = Integer.parseInt(bounds[1].strip());
      if (next < from || next > to) {
        next = from;
      }
      for (int tries = 0; tries <= to - from; tries++) {
        int candidate = next;
        next = next >= to ? from : next + 1;
        try (java.net.ServerSocket s = new java.net.ServerSocket(candidate, 1, java.net.InetAddress.getLoopbackAddress())) {
          return candidate;
        } catch (IOException busy) {
          // taken: the next one
        }
      }
      throw new IllegalStateException("no free port in quarry.cluster.ports=" + range);
    }
  }
}
