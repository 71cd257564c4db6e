package dev.quarry.cli;

import dev.quarry.ops.Config;
import dev.quarry.ops.Gateway;
import io.vertx.core.Vertx;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "serve", mixinStandardHelpOptions = true,
    description = "Run the gateway until SIGTERM or Ctrl-C. Settings come from QUARRY_* environment variables.")
final class ServeCommand implements Callable<Integer> {
  private static final long CLOSE_TIMEOUT_SECONDS = 30;

  @Spec CommandSpec spec;

  @Option(names = "--port", paramLabel = "PORT", description = "Listen here instead of $QUARRY_HTTP_PORT (0: any free port).")
  Integer port;

  @Override
  public Integer call() throws InterruptedException {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    Config config;
    try {
      config = Config.fromEnv();
    } catch (Config.InvalidSetting e) {
      err.println("error: " + e.getMessage());
      err.flush();
      return 2;
    }
    if (port != null) {
      config = config.withHttpPort(port);
    }
    Vertx vertx = Vertx.vertx();
    Gateway gateway = new Gateway(config);
    try {
      vertx.deployVerticle(gateway).await();
    } catch (RuntimeException e) {
      err.println("error: the gateway did not start: " + rootMessage(e)
          + " (PostgreSQL expected at " + config.pgHost() + ":" + config.pgPort() + "/" + config.pgDatabase()
          + "; ./quarry setup starts it)");
      err.flush();
      vertx.close().await();
      return 1;
    }
    CountDownLatch closed = new CountDownLatch(1);
    // SIGTERM and Ctrl-C run shutdown hooks: drain requests, close the pool, then let the JVM go.
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        vertx.close().toCompletionStage().toCompletableFuture().get(CLOSE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
      } catch (Exception e) {
        System.err.println("warning: the gateway did not close cleanly: " + rootMessage(e));
      } finally {
        closed.countDown();
      }
    }, "quarry-shutdown"));
    out.println("Quarry gateway listening on http://localhost:" + gateway.port() + "  (Ctrl-C to stop)");
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
