package dev.quarry.cli;

import picocli.CommandLine.Option;

/** The options every command that talks to a running gateway shares. */
final class ClientOptions {
  @Option(names = "--url", paramLabel = "URL",
      defaultValue = "${env:QUARRY_URL:-http://localhost:8080}",
      description = "The gateway to talk to (default: $QUARRY_URL or http://localhost:8080).")
  String url;

  @Option(names = "--api-key", paramLabel = "KEY", defaultValue = "${env:QUARRY_API_KEY}",
      description = "The tenant's API key (default: $QUARRY_API_KEY); an admin creates one with "
          + "'quarry admin keys create TENANT_ID'.")
  String apiKey;

  GatewayClient client() {
    if (apiKey == null || apiKey.isBlank()) {
      throw new CliFailure("no API key: set QUARRY_API_KEY (or pass --api-key); an admin creates one"
          + " with 'quarry admin tenants create NAME' or 'quarry admin keys create TENANT_ID'");
    }
    return new GatewayClient(url, apiKey.strip());
  }
}
