package dev.quarry.bench;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The gateway under soak as a process of its own ({@code dev.quarry.cli.Main serve}, configured
 * through the environment like a deployment), so that it can get a real SIGTERM, exit, and be
 * started again on the same port, database and gateway id.
 */
final class SoakGateway {
  private final Map<String, String> env;
  private final int port;
  private final int metricsPort;
  private final Path log;
  private final List<String> jvmOptions;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private Process process;
  private int starts;

  SoakGateway(Map<String, String> env, int port, int metricsPort, Path log) {
    this(env, port, metricsPort, log, List.of("-Xmx1g"));
  }

  /** With the JVM options given (the heap, say) instead of the soak's {@code -Xmx1g}. */
  SoakGateway(Map<String, String> env, int port, int metricsPort, Path log, List<String> jvmOptions) {
    this.env = Map.copyOf(env);
    this.port = port;
    this.metricsPort = metricsPort;
    this.log = log;
    this.jvmOptions = List.copyOf(jvmOptions);
  }

  int port() {
    return port;
  }

  long pid() {
    return process.pid();
  }

  /** Starts the process and waits (bounded) until {@code /readyz} says ready. */
  Duration start(Duration within) throws IOException, InterruptedException {
    long t0 = System.nanoTime();
    List<String> command = new ArrayList<>(List.of(javaBinary(), "--enable-native-access=ALL-UNNAMED",
        "--sun-misc-unsafe-memory-access=allow"));
    command.addAll(jvmOptions);
    command.addAll(List.of("-cp", gatewayClasspath(), "dev.quarry.cli.Main", "serve"));
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    pb.environment().putAll(env);
    pb.environment().put("QUARRY_HTTP_PORT", Integer.toString(port));
    pb.environment().put("QUARRY_METRICS_PORT", Integer.toString(metricsPort));
    process = pb.start();
    starts++;
    long deadline = t0 + within.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException("the gateway exited with " + process.exitValue() + " while starting; see " + log);
      }
      if (get("/readyz").statusCode() == 200) {
        return Duration.ofNanos(System.nanoTime() - t0);
      }
      Thread.sleep(200);
    }
    throw new IllegalStateException("the gateway was not ready within " + within.toSeconds() + " s; see " + log);
  }

  /** SIGTERM, then waits for the exit: its status and how long the drain took. */
  Exit terminate(Duration within, Duration dumpAfter) throws InterruptedException, IOException {
    long t0 = System.nanoTime();
    process.destroy();
    // A drain that outlasts its grace and the cancelled work's wait leaves a thread dump (virtual
    // threads included) beside the log: what the work that would not end was waiting for.
    if (!process.waitFor(dumpAfter.toSeconds(), TimeUnit.SECONDS) && process.isAlive()) {
      Path dump = log.resolveSibling("drain-" + process.pid() + ".txt");
      Process jcmd = new ProcessBuilder(jcmd(), Long.toString(process.pid()), "Thread.dump_to_file", "-format=text",
          dump.toString()).redirectErrorStream(true).start();
      jcmd.getInputStream().readAllBytes();
      jcmd.waitFor(30, TimeUnit.SECONDS);
      // And which of the gateway's objects are alive: a session, an endpoint, a live analysis left over.
      Process histogram = new ProcessBuilder(jcmd(), Long.toString(process.pid()), "GC.class_histogram")
          .redirectErrorStream(true).start();
      String classes = new String(histogram.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      histogram.waitFor(30, TimeUnit.SECONDS);
      Files.writeString(dump.resolveSibling("drain-" + process.pid() + "-classes.txt"), classes.lines()
          .filter(l -> l.contains("dev.quarry")).collect(Collectors.joining("\n")));
      System.out.println("  the drain is slow: thread dump in " + dump);
    }
    if (!process.waitFor(within.toSeconds(), TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
      return new Exit(-1, Duration.ofNanos(System.nanoTime() - t0));
    }
    return new Exit(process.exitValue(), Duration.ofNanos(System.nanoTime() - t0));
  }

  record Exit(int status, Duration took) {}

  /** SIGTERM, and SIGKILL if it has not exited within {@code grace}: for a run that is over, without the drain's dumps. */
  void stop(Duration grace) throws InterruptedException {
    process.destroy();
    if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly().waitFor();
    }
  }

  boolean alive() {
    return process != null && process.isAlive();
  }

  int starts() {
    return starts;
  }

  /** The GET's response, or a 0 status when the gateway does not answer. */
  Response get(String path) {
    return get(port, path);
  }

  private Response get(int onPort, String path) {
    try {
      HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + onPort + path))
          .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
      return new Response(r.statusCode(), r.body());
    } catch (IOException e) {
      return new Response(0, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Response(0, "interrupted");
    }
  }

  record Response(int statusCode, String body) {}

  /** The metrics port's {@code GET /metrics} (a 0 status when it does not answer). */
  Response metrics() {
    return get(metricsPort, "/metrics");
  }

  /** A full GC of the gateway now ({@code jcmd GC.run}), bounded to 60 s. */
  void gc() throws IOException, InterruptedException {
    Process gc = new ProcessBuilder(jcmd(), Long.toString(process.pid()), "GC.run").redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    if (!gc.waitFor(60, TimeUnit.SECONDS)) {
      gc.destroyForcibly();
    }
  }

  /**
   * Heap in use right after a full GC (jcmd GC.run, then the gateway's own jvm_memory_used_bytes),
   * and the process' resident set: what a leak would grow.
   */
  Memory memory() throws IOException, InterruptedException {
    Process gc = new ProcessBuilder(jcmd(), Long.toString(process.pid()), "GC.run").redirectErrorStream(true).start();
    gc.getInputStream().readAllBytes();
    gc.waitFor(30, TimeUnit.SECONDS);
    double heap = 0;
    Response metrics = get(metricsPort, "/metrics");
    for (String line : metrics.body().split("\n")) {
      if (line.startsWith("jvm_memory_used_bytes{") && line.contains("area=\"heap\"")) {
        heap += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    long rssKb = 0;
    for (String line : Files.readAllLines(Path.of("/proc/" + process.pid() + "/status"))) {
      if (line.startsWith("VmRSS:")) {
        rssKb = Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    return new Memory((long) heap, rssKb * 1024);
  }

  record Memory(long heapBytes, long rssBytes) {}

  private static String javaBinary() {
    return ProcessHandle.current().info().command().orElse("java");
  }

  private static String jcmd() {
    Path java = Path.of(javaBinary());
    Path jcmd = java.resolveSibling("jcmd");
    return Files.isExecutable(jcmd) ? jcmd.toString() : "jcmd";
  }

  /**
   * The bench's own class path less the bench's classes: the gateway's classes, the proto's and the
   * runtime dependencies of this checkout (what scripts/bench.sh put together).
   */
  private static String gatewayClasspath() {
    return Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
        .filter(e -> !e.replace('\\', '/').contains("bench/target/classes"))
        .collect(Collectors.joining(File.pathSeparator));
  }
}
