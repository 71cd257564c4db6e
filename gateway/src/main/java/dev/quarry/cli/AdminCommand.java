package dev.quarry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** Tenants and API keys, with the gateway's admin token ({@code /v1/admin/}). */
@Command(name = "admin", mixinStandardHelpOptions = true,
    description = "Manage tenants and their API keys (needs QUARRY_ADMIN_TOKEN).",
    subcommands = {AdminCommand.Tenants.class, AdminCommand.Keys.class})
final class AdminCommand implements Runnable {
  @Spec CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  @Command(name = "tenants", mixinStandardHelpOptions = true, description = "Create, list and delete tenants.")
  static final class Tenants implements Runnable {
    @Spec CommandSpec spec;

    @Override
    public void run() {
      spec.commandLine().usage(spec.commandLine().getOut());
    }

    @Command(name = "create", mixinStandardHelpOptions = true,
        description = "Create a tenant and its first API key (shown once: keep it).")
    int create(@Mixin AdminOptions options,
        @Option(names = "--key-only", description = "Print only the API key (for scripts).") boolean keyOnly,
        @Parameters(paramLabel = "NAME", description = "The tenant's name (unique).") String name) {
      JsonNode created = options.client().postJson("/v1/admin/tenants", Map.of("name", name));
      PrintWriter out = spec.commandLine().getOut();
      if (keyOnly) {
        out.println(created.path("api_key").asText());
      } else {
        out.printf("tenant %s (%s)%napi key %s, shown once, keep it:%n%s%n", created.path("id").asText(),
            created.path("name").asText(), created.path("key").path("prefix").asText(),
            created.path("api_key").asText());
      }
      out.flush();
      return 0;
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "List the tenants.")
    int list(@Mixin AdminOptions options) {
      JsonNode tenants = options.client().getJson("/v1/admin/tenants");
      PrintWriter out = spec.commandLine().getOut();
      out.printf("%-36s  %-24s  %s%n", "ID", "CREATED", "NAME");
      for (JsonNode t : tenants.path("tenants")) {
        out.printf("%-36s  %-24s  %s%n", t.path("id").asText(), t.path("created_at").asText(),
            t.path("name").asText());
      }
      out.flush();
      return 0;
    }

    @Command(name = "delete", mixinStandardHelpOptions = true,
        description = "Delete a tenant with all its documents and keys.")
    int delete(@Mixin AdminOptions options, @Parameters(paramLabel = "TENANT_ID") String tenantId) {
      options.client().delete("/v1/admin/tenants/" + GatewayClient.encode(tenantId));
      spec.commandLine().getOut().println("deleted tenant " + tenantId);
      spec.commandLine().getOut().flush();
      return 0;
    }
  }

  @Command(name = "keys", mixinStandardHelpOptions = true, description = "Create, list and revoke API keys.")
  static final class Keys implements Runnable {
    @Spec CommandSpec spec;

    @Override
    public void run() {
      spec.commandLine().usage(spec.commandLine().getOut());
    }

    @Command(name = "create", mixinStandardHelpOptions = true,
        description = "Create an API key for a tenant (shown once: keep it).")
    int create(@Mixin AdminOptions options,
        @Option(names = "--name", defaultValue = "", description = "A label for the key.") String name,
        @Option(names = "--key-only", description = "Print only the API key (for scripts).") boolean keyOnly,
        @Parameters(paramLabel = "TENANT_ID") String tenantId) {
      JsonNode key = options.client().postJson(
          "/v1/admin/tenants/" + GatewayClient.encode(tenantId) + "/keys", Map.of("name", name));
      PrintWriter out = spec.commandLine().getOut();
      if (keyOnly) {
        out.println(key.path("api_key").asText());
      } else {
        out.printf("api key %s (id %s), shown once, keep it:%n%s%n", key.path("prefix").asText(),
            key.path("id").asText(), key.path("api_key").asText());
      }
      out.flush();
      return 0;
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "List a tenant's API keys.")
    int list(@Mixin AdminOptions options, @Parameters(paramLabel = "TENANT_ID") String tenantId) {
      JsonNode keys = options.client().getJson("/v1/admin/tenants/" + GatewayClient.encode(tenantId) + "/keys");
      PrintWriter out = spec.commandLine().getOut();
      out.printf("%-36s  %-15s  %-24s  %-24s  %s%n", "ID", "PREFIX", "CREATED", "REVOKED", "NAME");
      for (JsonNode k : keys.path("keys")) {
        out.printf("%-36s  %-15s  %-24s  %-24s  %s%n", k.path("id").asText(), k.path("prefix").asText(),
            k.path("created_at").asText(), k.path("revoked_at").isNull() ? "-" : k.path("revoked_at").asText(),
            k.path("name").asText());
      }
      out.flush();
      return 0;
    }

    @Command(name = "revoke", mixinStandardHelpOptions = true, description = "Revoke an API key.")
    int revoke(@Mixin AdminOptions options, @Parameters(paramLabel = "TENANT_ID") String tenantId,
        @Parameters(paramLabel = "KEY_ID") String keyId) {
      options.client().delete("/v1/admin/tenants/" + GatewayClient.encode(tenantId) + "/keys/"
          + GatewayClient.encode(keyId));
      spec.commandLine().getOut().println("revoked key " + keyId);
      spec.commandLine().getOut().flush();
      return 0;
    }
  }
}
