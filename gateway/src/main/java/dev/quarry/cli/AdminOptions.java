package dev.quarry.cli;

import picocli.CommandLine.Option;

/** The options of the admin commands: the gateway, and the admin token instead of a tenant's key. */
final class AdminOptions {
  @Option(names = "--url", paramLabel = "URL",
      defaultValue = "${env:QUARRY_URL:-http://localhost:8080}",
      description = "The gateway to talk to (default: $QUARRY_URL or http://localhost:8080).")
  String url;

  @Option(names = "--admin-token", paramLabel = "TOKEN", defaultValue = "${env:QUARRY_ADMIN_TOKEN}",
      description = "The gateway's admin token (default: $QUARRY_ADMIN_TOKEN).")
  String adminToken;

  GatewayClient client() {
    if (adminToken == null || adminToken.isBlank()) {
      throw new CliFailure("no admin token: set QUARRY_ADMIN_TOKEN (or pass --admin-token) to the"
          + " token the gateway was started with");
    }
    return new GatewayClient(url, adminToken.strip());
  }
}
