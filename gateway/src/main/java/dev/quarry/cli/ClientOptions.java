package dev.quarry.cli;

import picocli.CommandLine.Option;

/** The options every command that talks to a running gateway shares. */
final class ClientOptions {
  @Option(names = "--url", paramLabel = "URL",
      defaultValue = "${env:QUARRY_URL:-http://localhost:8080}",
      description = "The gateway to talk to (default: $QUARRY_URL or http://localhost:8080).")
  String url;

  GatewayClient client() {
    return new GatewayClient(url);
  }
}
