package dev.quarry.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "delete", mixinStandardHelpOptions = true,
    description = "Delete a document, with its items and chunks.")
final class DeleteCommand implements Callable<Integer> {
  @Mixin ClientOptions options;
  @Spec CommandSpec spec;

  @Parameters(index = "0", paramLabel = "ID", description = "The document's id (see: quarry documents).")
  String id;

  @Override
  public Integer call() {
    options.client().delete("/v1/documents/" + GatewayClient.encode(id));
    PrintWriter out = spec.commandLine().getOut();
    out.println("deleted " + id);
    out.flush();
    return 0;
  }
}
