package dev.quarry.cli;

import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "ask", mixinStandardHelpOptions = true,
    description = "Ask a question: the model's code and its output stream in as they happen, then the"
        + " answer, its citations and the program that reproduces it.")
final class AskCommand implements Callable<Integer> {
  @Mixin ClientOptions options;
  @Spec CommandSpec spec;

  @Parameters(arity = "1..*", paramLabel = "QUESTION", description = "The question (several words need no quotes).")
  List<String> words;

  @Option(names = "--document", paramLabel = "ID", description = "Only look at this document (repeatable).")
  List<String> documentIds;

  @Option(names = "--preload", description = "Give the code the --document documents as the `documents` variable.")
  boolean preload;

  @Option(names = "--json", description = "Print each event's JSON as it came.")
  boolean json;

  @Override
  public Integer call() {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("question", String.join(" ", words));
    if (documentIds != null) {
      body.put("document_ids", documentIds);
    }
    if (preload) {
      body.put("preload", true);
    }
    body.put("stream", true);
    PrintWriter out = spec.commandLine().getOut();
    AnalysisPrinter printer = new AnalysisPrinter(out);
    options.client().postEventStream("/v1/analyses", body, (name, event) -> {
      if (json) {
        // Noted in this mode too: the exit code says whether the analysis ended without an answer.
        printer.observe(event);
        out.println(event.toString());
        out.flush();
      } else {
        printer.print(event);
      }
    });
    return printer.failed() ? 1 : 0;
  }
}
