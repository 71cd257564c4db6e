package dev.quarry.k8s;

import static dev.quarry.k8s.Manifests.SECRET;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.quarry.config.Config;
import dev.quarry.config.Settings;
import dev.quarry.store.Database;
import dev.quarry.support.ThrowawayCluster;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayName("k8s/: the gateway's database roles are made, and its credentials come from Secrets, in every layout")
class K8sDatabaseRolesTest {
  private static final String JOB = "Job/quarry-db-roles";
  private static final Pattern GETENV = Pattern.compile("\\\\getenv (\\w+) (\\w+)");
  private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([^}]+)}");

  @Test
  @DisplayName("the gateway reads both roles' passwords (and every other secret it is given) from Secrets, never the administrator's")
  void gatewayCredentialsFromSecrets() throws IOException {
    Set<String> secretSettings = new TreeSet<>();
    for (Settings.Definition d : Config.definitions()) {
      if (d.bounds().startsWith("secret")) {
        secretSettings.add(d.name());
      }
    }
    assertThat(secretSettings).contains("QUARRY_PG_PASSWORD", "QUARRY_PG_APP_PASSWORD");
    for (List<Path> layout : Manifests.layouts()) {
      List<ObjectNode> objects = Manifests.render(layout);
      Map<String, String> env = gatewayEnv(objects);
      Config config = Config.fromEnv(env);
      String adminSecret = adminSecret(objects);
      List<String> problems = new ArrayList<>();
      if (config.pgUser().equals(config.pgAppUser())) {
        problems.add("the owner and the app role are both " + config.pgUser());
      }
      // Through the code's own reader: a misspelt variable would leave its well-known default.
      for (String password : List.of(config.pgPassword(), config.pgAppPassword())) {
        if (!password.startsWith(SECRET) || password.endsWith("?")) {
          problems.add("a database password is " + password + ", not a required Secret key");
        }
      }
      if (config.pgPassword().equals(config.pgAppPassword())) {
        problems.add("both roles get the password " + config.pgPassword());
      }
      for (String name : secretSettings) {
        if (env.containsKey(name) && !env.get(name).startsWith(SECRET)) {
          problems.add(name + " is given as a plain value, not from a Secret");
        }
      }
      env.forEach((name, value) -> {
        if (value.startsWith(SECRET + adminSecret + "/")) {
          problems.add(name + " gives the gateway the database administrator's " + value);
        }
      });
      assertThat(problems).as(Manifests.name(layout)).isEmpty();
    }
  }

  @Test
  @DisplayName("the roles Job makes the roles the gateway connects as, with the same Secrets, and the roles the migrations name")
  void jobAgreesWithGatewayAndMigrations() throws IOException {
    Set<String> placeholders = new TreeSet<>();
    try (Stream<Path> files = Files.list(Manifests.ROOT.resolve("gateway/src/main/resources/db/migration"))) {
      for (Path f : files.sorted().toList()) {
        Matcher m = PLACEHOLDER.matcher(Files.readString(f));
        while (m.find()) {
          placeholders.add(m.group(1));
        }
      }
    }
    // Database.migrate gives appRole as QUARRY_PG_APP_USER; flyway:user is the role it migrates as, QUARRY_PG_USER.
    assertThat(placeholders).as("roles the migrations name; each must be one the Job makes").containsExactlyInAnyOrder("appRole", "flyway:user");
    Set<String> settings = new TreeSet<>();
    Config.definitions().forEach(d -> settings.add(d.name()));

    for (List<Path> layout : Manifests.layouts()) {
      List<ObjectNode> objects = Manifests.render(layout);
      Config gateway = Config.fromEnv(gatewayEnv(objects));
      JsonNode job = Manifests.container(Manifests.podSpec(Manifests.get(objects, JOB)), "roles");
      Map<String, String> jobEnv = Manifests.environment(objects, job);
      Config made = Config.fromEnv(jobEnv);
      List<String> problems = new ArrayList<>();
      Set<String> read = new TreeSet<>();
      Matcher m = GETENV.matcher(script(objects));
      while (m.find()) {
        read.add(m.group(2));
      }
      for (String name : read) {
        if (!settings.contains(name)) {
          problems.add("the roles script reads " + name + ", which is not a gateway setting");
        } else if (!jobEnv.containsKey(name)) {
          problems.add("the roles script reads " + name + ", which the Job does not set");
        }
      }
      if (!read.containsAll(Set.of("QUARRY_PG_USER", "QUARRY_PG_PASSWORD", "QUARRY_PG_APP_USER", "QUARRY_PG_APP_PASSWORD",
          "QUARRY_PG_DATABASE"))) {
        problems.add("the roles script does not read both roles, their passwords and the database: " + read);
      }
      Map<String, List<String>> compared = Map.of(
          "owner", List.of(gateway.pgUser(), made.pgUser()), "owner password", List.of(gateway.pgPassword(), made.pgPassword()),
          "app role", List.of(gateway.pgAppUser(), made.pgAppUser()),
          "app password", List.of(gateway.pgAppPassword(), made.pgAppPassword()),
          "database", List.of(gateway.pgDatabase(), made.pgDatabase()),
          "host", List.of(gateway.pgHost(), jobEnv.getOrDefault("PGHOST", "")),
          "port", List.of(Integer.toString(gateway.pgPort()), jobEnv.getOrDefault("PGPORT", "")));
      compared.forEach((what, pair) -> {
        if (!pair.get(0).equals(pair.get(1))) {
          problems.add("the gateway's " + what + " is " + pair.get(0) + ", the Job's " + pair.get(1));
        }
      });
      for (String admin : List.of("PGUSER", "PGPASSWORD")) {
        if (!jobEnv.getOrDefault(admin, "").startsWith(SECRET + adminSecret(objects) + "/")) {
          problems.add("the Job's " + admin + " is not from the administrator's Secret: " + jobEnv.get(admin));
        }
      }
      ObjectNode postgres = Manifests.find(objects, "StatefulSet/quarry-postgres");
      if (postgres != null) {
        Map<String, String> pgEnv = Manifests.environment(objects, Manifests.container(Manifests.podSpec(postgres), "postgres"));
        if (!jobEnv.get("PGUSER").equals(pgEnv.get("POSTGRES_USER"))
            || !jobEnv.get("PGPASSWORD").equals(pgEnv.get("POSTGRES_PASSWORD"))) {
          problems.add("the in-cluster superuser (" + pgEnv.get("POSTGRES_USER") + ") is not the Job's administrator ("
              + jobEnv.get("PGUSER") + ")");
        }
        if (pgEnv.containsKey("POSTGRES_DB")) {
          problems.add("POSTGRES_DB makes the database owned by the superuser; the Job makes it, owned by " + gateway.pgUser());
        }
      }
      assertThat(problems).as(Manifests.name(layout)).isEmpty();
    }
  }

  @Test
  @DisplayName("on a bare PostgreSQL the Job's own command makes what the gateway migrates and works with: owner and app role, neither a superuser, row-level security holding")
  void jobMakesAWorkingDatabase(@TempDir Path dir) throws Exception {
    List<ObjectNode> objects = Manifests.render(List.of(Manifests.K8S.resolve("components/postgres")));
    try (ThrowawayCluster cluster = ThrowawayCluster.bare()) {
      String adminPassword = "admin-" + UUID.randomUUID();
      cluster.superuserPassword(adminPassword);
      String adminSecret = adminSecret(objects);
      Map<String, String> secrets = new HashMap<>(Map.of(
          SECRET + adminSecret + "/username", "postgres", SECRET + adminSecret + "/password", adminPassword,
          SECRET + "quarry-secrets/pg-password", "owner-" + UUID.randomUUID(),
          SECRET + "quarry-secrets/pg-app-password", "app-" + UUID.randomUUID()));

      Job first = runJob(objects, dir, cluster, secrets, Map.of());
      assertThat(first.exit()).as(first.output()).isZero();
      assertThat(first.output()).as("the Job's log shows no password").doesNotContain(secrets.values().stream()
          .filter(v -> !v.equals("postgres")).toList());

      Config config = gatewayConfig(objects, cluster, secrets);
      assertThat(Database.migrate(config)).as("the gateway's migrations, as the owner").isGreaterThanOrEqualTo(11);
      try (Connection app = DriverManager.getConnection(config.jdbcUrl(), config.pgAppUser(), config.pgAppPassword());
          Statement s = app.createStatement()) {
        assertThat(row(s, "SELECT current_user, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"))
            .isEqualTo(config.pgAppUser() + "|f|f");
        assertThat(row(s, "SELECT count(*) FROM documents")).as("documents the app role reads without a tenant").isEqualTo("0");
        assertThat(row(s, "SELECT count(*) FROM pg_tables WHERE tableowner = current_user")).as("tables the app role owns")
            .isEqualTo("0");
        try {
          s.execute("INSERT INTO token_usage (tenant_id, day, tokens) VALUES ('00000000-0000-0000-0000-000000000001', current_date, 1)");
          throw new AssertionError("the app role wrote a tenant's row with no tenant set");
        } catch (SQLException refused) {
          assertThat(refused.getMessage()).contains("row-level security");
        }
      }
      try (Connection owner = DriverManager.getConnection(config.jdbcUrl(), config.pgUser(), config.pgPassword());
          Statement s = owner.createStatement()) {
        assertThat(row(s, "SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user")).isEqualTo("f|f");
        assertThat(row(s, "SELECT tableowner FROM pg_tables WHERE tablename = 'documents'")).isEqualTo(config.pgUser());
      }

      // Again, with a new app password: what exists is kept, the password follows the Secret.
      secrets.put(SECRET + "quarry-secrets/pg-app-password", "app2-" + UUID.randomUUID());
      Job again = runJob(objects, dir, cluster, secrets, Map.of());
      assertThat(again.exit()).as(again.output()).isZero();
      Config rotated = gatewayConfig(objects, cluster, secrets);
      try (Connection app = DriverManager.getConnection(rotated.jdbcUrl(), rotated.pgAppUser(), rotated.pgAppPassword());
          Statement s = app.createStatement()) {
        assertThat(row(s, "SELECT current_user")).isEqualTo(rotated.pgAppUser());
      }

      // A layout that points the gateway at the superuser is refused, and changes nothing (the next
      // run still logs in with the administrator's password).
      Job superuser = runJob(objects, dir, cluster, secrets, Map.of("QUARRY_PG_APP_USER", "postgres"));
      assertThat(superuser.exit()).isNotZero();
      assertThat(superuser.output()).contains("role postgres is a superuser or bypasses row-level security");
      Job unset = runJob(objects, dir, cluster, secrets, Map.of("QUARRY_PG_APP_PASSWORD", ""));
      assertThat(unset.exit()).isNotZero();
      assertThat(unset.output()).contains("QUARRY_PG_APP_PASSWORD", "must all be set");
    }
  }

  private record Job(int exit, String output) {}

  /**
   * Runs the Job's container command here, against {@code cluster}: its script written where the
   * command reads it from the mounted ConfigMap, its environment as rendered with the Secrets
   * filled in and the database host pointed at the cluster.
   */
  private static Job runJob(List<ObjectNode> objects, Path dir, ThrowawayCluster cluster, Map<String, String> secrets,
      Map<String, String> overrides) throws IOException, InterruptedException {
    JsonNode pod = Manifests.podSpec(Manifests.get(objects, JOB));
    JsonNode container = Manifests.container(pod, "roles");
    String mountPath = null;
    for (JsonNode m : container.path("volumeMounts")) {
      for (JsonNode v : pod.path("volumes")) {
        if (v.path("name").equals(m.path("name")) && v.path("configMap").path("name").asText().equals("quarry-db-roles")) {
          mountPath = m.path("mountPath").asText();
        }
      }
    }
    assertThat(mountPath).as("the Job mounts the roles ConfigMap").isNotNull();
    Files.writeString(dir.resolve("roles.sql"), script(objects));
    List<String> command = new ArrayList<>();
    for (JsonNode arg : container.path("command")) {
      command.add(arg.asText().replace(mountPath + "/", dir + "/"));
    }
    container.path("args").forEach(arg -> command.add(arg.asText()));
    assertThat(String.join(" ", command)).as("the Job's command reads the script from the mount").contains(dir + "/roles.sql");
    ProcessBuilder process = new ProcessBuilder(command).redirectErrorStream(true);
    Map<String, String> env = process.environment();
    env.keySet().removeIf(k -> !k.equals("PATH"));
    env.putAll(filled(Manifests.environment(objects, container), secrets));
    env.put("PGHOST", "127.0.0.1");
    env.put("PGPORT", Integer.toString(cluster.port()));
    env.putAll(overrides);
    Process p = process.start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("the roles Job did not finish within 60 s: " + output);
    }
    return new Job(p.exitValue(), output);
  }

  /** The gateway's settings as the pod gets them, with the Secrets filled in, pointed at {@code cluster}. */
  private static Config gatewayConfig(List<ObjectNode> objects, ThrowawayCluster cluster, Map<String, String> secrets) {
    Map<String, String> env = filled(gatewayEnv(objects), secrets);
    env.put("QUARRY_PG_HOST", "127.0.0.1");
    env.put("QUARRY_PG_PORT", Integer.toString(cluster.port()));
    return Config.fromEnv(env);
  }

  private static Map<String, String> filled(Map<String, String> env, Map<String, String> secrets) {
    Map<String, String> out = new HashMap<>();
    env.forEach((name, value) -> {
      if (value.startsWith(SECRET) && value.endsWith("?")) {
        return;   // an optional key the test's Secret does not have
      }
      if (value.startsWith(SECRET) && !secrets.containsKey(value)) {
        throw new AssertionError(name + " needs " + value + ", which the test does not know");
      }
      out.put(name, secrets.getOrDefault(value, value));
    });
    return out;
  }

  private static Map<String, String> gatewayEnv(List<ObjectNode> objects) {
    JsonNode pod = Manifests.podSpec(Manifests.get(objects, "Deployment/quarry-gateway"));
    return Manifests.environment(objects, Manifests.container(pod, "gateway"));
  }

  /** The Secret the Job connects with as the database's administrator. */
  private static String adminSecret(List<ObjectNode> objects) {
    JsonNode job = Manifests.container(Manifests.podSpec(Manifests.get(objects, JOB)), "roles");
    String password = Manifests.environment(objects, job).getOrDefault("PGPASSWORD", "");
    assertThat(password).as("the Job's administrator password").startsWith(SECRET);
    return password.substring(SECRET.length(), password.indexOf('/'));
  }

  private static String script(List<ObjectNode> objects) {
    return Manifests.data(objects, "quarry-db-roles").path("roles.sql").asText();
  }

  private static String row(Statement s, String sql) throws SQLException {
    try (ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      List<String> values = new ArrayList<>();
      for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
        String v = rs.getString(i);
        values.add(v);
      }
      return String.join("|", values);
    }
  }
}
