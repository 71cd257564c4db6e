package dev.quarry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.api.TestGateway;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("quarry admin: tenants and keys from the command line")
class CliAdminTest {
  @AutoClose
  private final TestGateway gateway = TestGateway.started();

  private CliRun admin(String... args) {
    String[] all = new String[args.length + 4];
    System.arraycopy(args, 0, all, 0, args.length);
    all[args.length] = "--url";
    all[args.length + 1] = gateway.url();
    all[args.length + 2] = "--admin-token";
    all[args.length + 3] = TestGateway.ADMIN_TOKEN;
    return CliRun.of(all);
  }

  @Test
  @DisplayName("create a tenant, use its key, make and revoke another key, delete the tenant")
  void lifecycle() {
    CliRun created = admin("admin", "tenants", "create", "--key-only", "cli-tenant");
    assertThat(created.exitCode()).as(created.err()).isZero();
    String key = created.out().strip();
    assertThat(key).startsWith("qk_");
    CliRun docs = CliRun.of("documents", "--url", gateway.url(), "--api-key", key);
    assertThat(docs.exitCode()).as(docs.err()).isZero();
    assertThat(docs.out()).contains("no documents yet");

    CliRun tenants = admin("admin", "tenants", "list");
    String line = tenants.out().lines().filter(l -> l.endsWith("cli-tenant")).findFirst().orElseThrow();
    String tenantId = line.substring(0, 36);
    CliRun second = admin("admin", "keys", "create", "--name", "laptop", tenantId);
    assertThat(second.out()).contains("shown once");
    CliRun keys = admin("admin", "keys", "list", tenantId);
    assertThat(keys.out()).contains("laptop").contains(key.substring(0, 15)).doesNotContain(key);
    String firstKeyId = keys.out().lines().skip(1).findFirst().orElseThrow().substring(0, 36);
    assertThat(admin("admin", "keys", "revoke", tenantId, firstKeyId).exitCode()).isZero();
    CliRun refused = CliRun.of("documents", "--url", gateway.url(), "--api-key", key);
    assertThat(refused.exitCode()).isEqualTo(1);
    assertThat(refused.err()).contains("unauthorized");

    assertThat(admin("admin", "tenants", "delete", tenantId).exitCode()).isZero();
    assertThat(admin("admin", "tenants", "list").out()).doesNotContain("cli-tenant");
  }

  @Test
  @DisplayName("without an API key the tenant commands say how to get one; without the admin token the admin ones do")
  void missingCredentials() {
    CliRun noKey = CliRun.of("documents", "--url", gateway.url());
    if (System.getenv("QUARRY_API_KEY") == null) {
      assertThat(noKey.exitCode()).isEqualTo(1);
      assertThat(noKey.err()).contains("QUARRY_API_KEY").contains("quarry admin");
    }
    CliRun wrongToken = CliRun.of("admin", "tenants", "list", "--url", gateway.url(), "--admin-token", "wrong-token-123456");
    assertThat(wrongToken.exitCode()).isEqualTo(1);
    assertThat(wrongToken.err()).contains("unauthorized");
  }
}
