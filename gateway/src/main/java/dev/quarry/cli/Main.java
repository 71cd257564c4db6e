package dev.quarry.cli;

import dev.quarry.cli.GatewayClient.GatewayError;
import dev.quarry.cli.GatewayClient.GatewayUnreachable;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** The one jar's entry point: {@code serve} runs the gateway, the other commands are its CLI. */
@Command(
    name = "quarry",
    mixinStandardHelpOptions = true,
    version = "quarry 0.1.0",
    description = "Research questions over your documents, answered by code run in sandboxes.",
    subcommands = {
        ServeCommand.class,
        IngestCommand.class,
        SearchCommand.class,
        AskCommand.class,
        DocumentsCommand.class,
        DeleteCommand.class,
        TocCommand.class,
        ItemsCommand.class,
        ExecCommand.class,
        AdminCommand.class,
        McpCommand.class,
        DemoCommand.class,
        CommandLine.HelpCommand.class
    })
public final class Main implements Runnable {
  /** Exit code when the gateway cannot be reached at all. */
  static final int UNREACHABLE = 3;

  public static void main(String[] args) {
    System.exit(commandLine().execute(args));
  }

  /** The command line as {@code main} runs it; tests run it in-process with their own writers. */
  public static CommandLine commandLine() {
    CommandLine cli = new CommandLine(new Main());
    cli.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
      PrintWriter err = commandLine.getErr();
      int code = switch (e) {
        case GatewayUnreachable u -> {
          err.println("error: " + u.getMessage());
          yield UNREACHABLE;
        }
        case GatewayError g -> {
          err.println("error: " + g.code() + ": " + g.getMessage());
          yield 1;
        }
        case CliFailure f -> {
          err.println("error: " + f.getMessage());
          yield 1;
        }
        default -> throw e;
      };
      err.flush();
      return code;
    });
    return cli;
  }

  @Spec CommandSpec spec;

  /** Without a command: show what there is. */
  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }
}
