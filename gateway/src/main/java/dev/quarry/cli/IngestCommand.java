package dev.quarry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.quarry.cli.GatewayClient.GatewayError;
import dev.quarry.cli.GatewayClient.GatewayUnreachable;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "ingest", mixinStandardHelpOptions = true,
    description = "Upload files, and folders recursively, into the knowledge base. "
        + "Exits non-zero when any file failed.")
final class IngestCommand implements Callable<Integer> {
  /** Two uploads in flight keep the gateway's converter busy without queueing behind one big file. */
  private static final int PARALLEL_UPLOADS = 2;
  private static final int PROGRESS_BAR_FROM = 4;
  /** A file this big gets a progress bar of its own: the model may take minutes over it. */
  private static final long BIG_FILE_BYTES = 1 << 20;

  @Mixin ClientOptions options;
  @Spec CommandSpec spec;

  @Parameters(arity = "1..*", paramLabel = "PATH", description = "Files or folders to ingest.")
  List<Path> paths;

  @Option(names = "--no-progress", description = "Never draw a progress bar.")
  boolean noProgress;

  /** One file to upload; {@code uri} is the path as the user named it, so re-ingesting replaces. */
  record Source(Path file, String uri) {}

  sealed interface Outcome permits Ingested, Failed {
    Source source();
  }

  record Ingested(Source source, JsonNode result) implements Outcome {}

  record Failed(Source source, String reason) implements Outcome {}

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    List<Outcome> outcomes = new ArrayList<>();
    List<Source> sources = new ArrayList<>();
    for (Path path : paths) {
      collect(path, sources, outcomes);
    }
    GatewayClient client = options.client();
    if (!sources.isEmpty()) {
      client.checkAlive();
    }
    outcomes.addAll(upload(client, sources, err));
    int failed = 0;
    int created = 0;
    int unchanged = 0;
    for (Outcome outcome : outcomes) {
      switch (outcome) {
        case Ingested i -> {
          String status = i.result().path("status").asText();
          if (status.equals("unchanged")) {
            unchanged++;
          } else {
            created++;
          }
          out.printf("%-9s %s  %s  (%s, %d items, %d chunks)  %s%n", status, i.source().uri(),
              i.result().path("id").asText(), i.result().path("source_type").asText(),
              i.result().path("item_count").asInt(), i.result().path("chunk_count").asInt(),
              i.result().path("title").asText());
        }
        case Failed f -> {
          failed++;
          err.printf("FAILED    %s: %s%n", f.source().uri(), f.reason());
        }
      }
    }
    out.printf("%d ingested (%d new or replaced, %d unchanged), %d failed%n", created + unchanged, created, unchanged, failed);
    out.flush();
    err.flush();
    return failed == 0 ? 0 : 1;
  }

  private static void collect(Path path, List<Source> sources, List<Outcome> outcomes) throws IOException {
    if (Files.isRegularFile(path)) {
      sources.add(new Source(path, path.getFileName().toString()));
    } else if (Files.isDirectory(path)) {
      Path anchor = path.toAbsolutePath().normalize().getParent();
      try (Stream<Path> walk = Files.walk(path)) {
        walk.filter(Files::isRegularFile)
            .filter(f -> !f.getFileName().toString().startsWith("."))
            .sorted()
            .forEach(f -> sources.add(new Source(f, uriOf(anchor, f))));
      }
    } else {
      outcomes.add(new Failed(new Source(path, path.toString()), "no such file or directory"));
    }
  }

  /** The path relative to the folder the user named, including that folder's own name. */
  private static String uriOf(Path anchor, Path file) {
    Path absolute = file.toAbsolutePath().normalize();
    Path relative = anchor == null ? absolute : anchor.relativize(absolute);
    return relative.toString().replace('\\', '/');
  }

  private List<Outcome> upload(GatewayClient client, List<Source> sources, PrintWriter err)
      throws InterruptedException {
    ExecutorService uploads = Executors.newFixedThreadPool(PARALLEL_UPLOADS);
    try (ProgressBar bar = progressBar(sources)) {
      List<Future<Outcome>> pending = new ArrayList<>();
      for (Source source : sources) {
        pending.add(uploads.submit(() -> {
          Outcome outcome = uploadOne(client, source, bar);
          if (bar != null) {
            bar.step();
          }
          return outcome;
        }));
      }
      List<Outcome> outcomes = new ArrayList<>();
      for (Future<Outcome> f : pending) {
        try {
          outcomes.add(f.get());
        } catch (ExecutionException e) {
          throw new IllegalStateException("an upload task failed unexpectedly", e.getCause());
        }
      }
      return outcomes;
    } finally {
      uploads.shutdownNow();
    }
  }

  private static Outcome uploadOne(GatewayClient client, Source source, ProgressBar bar) {
    try {
      // The gateway's progress events name the file's chunks as the model gets through them.
      return new Ingested(source, client.upload(source.file(), source.uri(), (event, data) -> {
        if (bar != null && event.equals("embedded")) {
          bar.setExtraMessage(source.file().getFileName() + ": " + data.path("chunks_embedded").asInt()
              + "/" + data.path("chunk_count").asInt() + " chunks");
        }
      }));
    } catch (GatewayError e) {
      return new Failed(source, e.code() + ": " + e.getMessage());
    } catch (GatewayUnreachable | CliFailure e) {
      return new Failed(source, e.getMessage());
    } catch (IOException e) {
      return new Failed(source, "cannot read the file: " + e.getMessage());
    }
  }

  private ProgressBar progressBar(List<Source> sources) {
    // A bar redrawn with carriage returns is noise in a log or a pipe: draw it on terminals only.
    boolean worthIt = sources.size() >= PROGRESS_BAR_FROM || sources.stream().anyMatch(IngestCommand::big);
    if (noProgress || !worthIt || !onTerminal()) {
      return null;
    }
    return new ProgressBarBuilder()
        .setTaskName("Ingesting")
        .setInitialMax(sources.size())
        .setUnit(" files", 1)
        // Redrawn while a file's chunks are embedded too, not only when a file is done.
        .continuousUpdate()
        .setConsumer(new ConsoleProgressBarConsumer(System.err))
        .build();
  }

  private static boolean big(Source source) {
    try {
      return Files.size(source.file()) >= BIG_FILE_BYTES;
    } catch (IOException e) {
      return false; // its upload will say what is wrong with it
    }
  }

  /**
   * Whether standard output is a terminal. From Java 22 System.console() is non-null even when
   * output is redirected, and Console.isTerminal() tells; the jar targets Java 21, so ask for it
   * reflectively.
   */
  private static boolean onTerminal() {
    java.io.Console console = System.console();
    if (console == null) {
      return false;
    }
    try {
      return (boolean) java.io.Console.class.getMethod("isTerminal").invoke(console);
    } catch (ReflectiveOperationException e) {
      return true;
    }
  }
}
