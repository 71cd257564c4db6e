package dev.quarry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.quarry.agent.AgentSettings;
import dev.quarry.config.ConfigSource;
import dev.quarry.config.InvalidSetting;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import sun.misc.Signal;

/**
 * The parts of {@code ./quarry demo} (scripts/demo.sh) that talk HTTP: which model the gateway will
 * use, the recorded model to give it when there is none, and the demo's questions asked, streamed
 * and replayed. In Java, beside {@code ask}, so that the tests run exactly what the demo runs.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
    description = "The parts of ./quarry demo: the model it uses, its recorded model, its questions.",
    subcommands = {DemoCommand.Model.class, DemoCommand.Recorded.class, DemoCommand.Questions.class})
final class DemoCommand implements Runnable {
  @Spec CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  /** Read as the gateway reads it (the environment over $QUARRY_CONFIG_FILE), so that the demo and its gateway agree. */
  @Command(name = "model", mixinStandardHelpOptions = true,
      description = "Print the model endpoint and name a gateway started here would use, or 'none'.")
  static final class Model implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Override
    public Integer call() {
      AgentSettings agent;
      try {
        agent = AgentSettings.fromEnv(ConfigSource.load(System.getenv()));
      } catch (InvalidSetting e) {
        throw new CliFailure(e.getMessage());
      }
      PrintWriter out = spec.commandLine().getOut();
      out.println(agent.modelConfigured() ? agent.baseUrl() + " (model " + agent.model() + ")" : "none");
      out.flush();
      return 0;
    }
  }

  @Command(name = "recorded-model", mixinStandardHelpOptions = true,
      description = "Serve a recording's model turns as an OpenAI-compatible chat completions endpoint on"
          + " 127.0.0.1, until SIGTERM or Ctrl-C. It prints its base URL once it listens.")
  static final class Recorded implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Option(names = "--recording", required = true, paramLabel = "FILE", description = "The recording (examples/demo/recording.json).")
    Path recording;

    @Option(names = "--port", defaultValue = "0", paramLabel = "PORT", description = "Listen here (default 0: any free port).")
    int port;

    @Override
    public Integer call() throws InterruptedException {
      if (port < 0 || port > 65535) {
        throw new CliFailure("--port " + port + " is not a port (0 to 65535)");
      }
      DemoRecording loaded = DemoRecording.read(recording);
      CountDownLatch stop = new CountDownLatch(1);
      try (RecordedModelServer server = RecordedModelServer.start(loaded, port)) {
        for (String name : new String[] {"TERM", "INT"}) {
          Signal.handle(new Signal(name), signal -> stop.countDown());
        }
        PrintWriter out = spec.commandLine().getOut();
        out.println("recorded model listening on " + server.baseUrl() + " (" + loaded.analyses().size()
            + " recorded analyses from " + recording + ")");
        out.flush();
        stop.await();
      }
      return 0;
    }
  }

  @Command(name = "questions", mixinStandardHelpOptions = true,
      description = "Ask the recording's questions of the gateway, streaming each analysis as 'ask' does, then"
          + " replay each program twice and say whether the output matches. Exits 1 unless every question"
          + " was answered and its program replayed with the same output.")
  static final class Questions implements Callable<Integer> {
    @Mixin ClientOptions options;
    @Spec CommandSpec spec;

    @Option(names = "--recording", required = true, paramLabel = "FILE",
        description = "Where the questions are (examples/demo/recording.json); the model need not be the recorded one.")
    Path recording;

    @Override
    public Integer call() {
      DemoRecording loaded = DemoRecording.read(recording);
      GatewayClient client = options.client();
      PrintWriter out = spec.commandLine().getOut();
      int total = loaded.analyses().size();
      int good = 0;
      StringBuilder summary = new StringBuilder();
      for (int i = 0; i < total; i++) {
        String question = loaded.analyses().get(i).question();
        out.println();
        out.println("━━ Question " + (i + 1) + " of " + total + ": " + question);
        out.flush();
        AnalysisPrinter printer = ask(client, question, out);
        String outcome;
        if (!printer.answered()) {
          outcome = "no answer";
        } else {
          boolean same = replayTwice(client, printer.analysisId(), out);
          outcome = printer.citations() + (printer.citations() == 1 ? " citation" : " citations")
              + (same ? ", the program replayed with the same output" : ", the program's replay did not match");
          good += same ? 1 : 0;
        }
        summary.append(String.format("  %d. %s%n     analysis %s: %s%n", i + 1, question, printer.analysisId(), outcome));
      }
      out.println();
      out.println("━━ " + good + " of " + total + " questions answered and replayed with the same output");
      out.print(summary);
      out.flush();
      return good == total ? 0 : 1;
    }

    private static AnalysisPrinter ask(GatewayClient client, String question, PrintWriter out) {
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("question", question);
      body.put("stream", true);
      AnalysisPrinter printer = new AnalysisPrinter(out);
      client.postEventStream("/v1/analyses", body, (name, event) -> printer.print(event));
      return printer;
    }

    /**
     * The first replay records the program's output as the baseline, the second says whether it
     * matches: a program that reproduces its answer gives the same output in a fresh sandbox.
     */
    private static boolean replayTwice(GatewayClient client, String analysisId, PrintWriter out) {
      String path = "/v1/analyses/" + GatewayClient.encode(analysisId) + "/replay";
      out.println();
      out.println("Replay: the program alone, in a fresh sandbox (POST " + path + ")");
      JsonNode first = client.postJson(path, Map.of()).path("replay");
      first.path("stdout").asText("").lines().forEach(l -> out.println("  > " + l));
      if (!first.path("success").asBoolean()) {
        out.println("  ✗ " + first.path("error").path("type").asText() + ": " + first.path("error").path("message").asText());
        out.flush();
        return false;
      }
      out.println("  ✓ " + first.path("duration_ms").asLong() + " ms; its output is now the baseline ("
          + first.path("baseline").asText() + ")");
      JsonNode second = client.postJson(path, Map.of()).path("replay");
      boolean matches = second.path("success").asBoolean() && second.path("matches").asBoolean(false);
      out.println("Replay again, in another fresh sandbox: "
          + (matches ? "✓ the output matches the first replay's" : "✗ the output differs from the first replay's"));
      out.flush();
      return matches;
    }
  }
}
