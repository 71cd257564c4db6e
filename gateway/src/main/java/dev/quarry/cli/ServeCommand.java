package dev.quarry.cli;

import dev.quarry.config.Config;
import dev.quarry.config.InvalidSetting;
import dev.quarry.gateway.GatewaySettings;
import dev.quarry.gateway.Gateway;
import dev.quarry.gateway.OpsSettings;
import dev.quarry.telemetry.QuarryMetrics;
import io.vertx.core.Vertx;
import java.io.PrintWriter;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import sun.misc.Signal;

@Command(name = "serve", mixinStandardHelpOptions = true,
    description = "Run the gateway until SIGTERM or Ctrl-C. Settings come from QUARRY_* environment variables, over the optional file $QUARRY_CONFIG_FILE.")
final class ServeCommand implements Callable<Integer> {
  /** Beyond the drain grace: cancelled work closing, requests draining, sandboxes removed. */
  private static final long CLOSE_MARGIN_SECONDS = 30;

  @Spec CommandSpec spec;

  @Option(names = "--port", paramLabel = "PORT", description = "Listen here instead of $QUARRY_HTTP_PORT (0: any free port).")
  Integer port;

  @Override
  public Integer call() throws InterruptedException {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    GatewaySettings settings;
    try {
      // The one place the environment is read: every part gets its settings from this.
      settings = GatewaySettings.load(System.getenv());
    } catch (InvalidSetting e) {
      err.println("error: " + e.getMessage());
      err.flush();
      return 2;
    }
    if (port != null) {
      settings = settings.withConfig(settings.config().withHttpPort(port));
    }
    Config config = settings.config();
    OpsSettings ops = settings.ops();
    QuarryMetrics metrics = new QuarryMetrics();
    Vertx vertx = Gateway.vertx(metrics);
    Gateway gateway = new Gateway(settings, metrics);
    String deployment;
    try {
      deployment = vertx.deployVerticle(gateway).await();
    } catch (RuntimeException e) {
      err.println("error: the gateway did not start: " + rootMessage(e)
          + " (PostgreSQL expected at " + config.pgHost() + ":" + config.pgPort() + "/" + config.pgDatabase()
          + "; ./quarry setup starts it)");
      err.flush();
      vertx.close().await();
      return 1;
    }
    CountDownLatch closed = new CountDownLatch(1);
    long closeTimeout = ops.drainGrace().toSeconds() + CLOSE_MARGIN_SECONDS;
    // SIGTERM and Ctrl-C: drain analyses, ingests, then requests, remove the sandboxes, close the
    // pool. A drained shutdown is a clean exit, so the process says 0 (the JVM would report 143 for
    // the signal); one that did not finish in time says 1.
    AtomicBoolean stopping = new AtomicBoolean();
    Runnable stop = () -> {
      if (!stopping.compareAndSet(false, true)) {
        return;
      }
      int status = 0;
      System.err.println("quarry: stopping: draining running work, then requests");
      try {
        // Undeployed explicitly first, so that the drain runs and finishes before Vert.x closes.
        vertx.undeploy(deployment).toCompletionStage().toCompletableFuture().get(closeTimeout, TimeUnit.SECONDS);
        vertx.close().toCompletionStage().toCompletableFuture().get(CLOSE_MARGIN_SECONDS, TimeUnit.SECONDS);
        // On stderr as well as in the log: log lines written this late are not always delivered.
        System.err.println("quarry: stopped cleanly");
      } catch (Exception e) {
        System.err.println("warning: the gateway did not close cleanly: " + rootMessage(e));
        status = 1;
      } finally {
        closed.countDown();
      }
      Runtime.getRuntime().halt(status);
    };
    // The signals are handled here, not left to the JVM: the JVM would start every shutdown hook at
    // once, ONNX Runtime's among them, which releases the runtime's environment while the drain's
    // ingests and searches still embed with it (a native crash, seen once in a test JVM). Draining
    // first and halting after means the JVM's shutdown never begins while anything embeds.
    for (String name : List.of("TERM", "INT")) {
      Signal.handle(new Signal(name), signal -> new Thread(stop, "quarry-shutdown").start());
    }
    // Any other way the JVM shuts down (a SIGHUP, say) still drains, as before.
    Runtime.getRuntime().addShutdownHook(new Thread(stop, "quarry-shutdown-hook"));
    out.println("Quarry gateway listening on http://localhost:" + gateway.port() + "  (metrics: http://localhost:"
        + gateway.metricsPort() + "/metrics; Ctrl-C to stop)");
    out.flush();
    closed.await();
    return 0;
  }

  private static String rootMessage(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String message = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
    return message.lines().findFirst().orElse(message);
  }
}
