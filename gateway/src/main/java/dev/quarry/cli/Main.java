package dev.quarry.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The one jar's entry point: {@code serve} runs the gateway, the other commands are its CLI. */
@Command(
    name = "quarry",
    mixinStandardHelpOptions = true,
    version = "quarry 0.1.0",
    description = "Research questions over your documents, answered by code run in sandboxes.",
    subcommands = {})
public final class Main {
  public static void main(String[] args) {
    System.exit(new CommandLine(new Main()).execute(args));
  }
}
