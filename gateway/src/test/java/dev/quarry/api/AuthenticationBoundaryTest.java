package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.config.Quota;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Route;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The authentication boundary against every spelling of every route. The routes come from the
 * gateway's own router, so a route added later is swept too; requests go out as raw request lines,
 * so no client normalises the path first. What each must get is written here from the API's
 * promise, not from the code: {@code /v1/admin/} takes the admin token and nothing else, the probes
 * take nothing, everything else a tenant's key and nothing else; a path not in canonical form is
 * refused with 400 whoever sends it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("Authentication is decided by the route matched, for every spelling of every route")
class AuthenticationBoundaryTest {
  /** The probes, and the web console's static files (which hold no secret: see consoleIsTheSameForAnyone). */
  private static final Set<String> OPEN = open();

  private static Set<String> open() {
    Set<String> open = new TreeSet<>(Set.of("/healthz", "/readyz"));
    open.addAll(ConsoleRoutes.FILES.keySet());
    return open;
  }
  private static final int RANDOM_MIXES = 12;

  @AutoClose
  private final TestGateway gateway = TestGateway.started(config -> config.withTenancy(
      config.tenancy().withDefault(Quota.REQUESTS_PER_MINUTE, 1_000_000)));
  private final TestGateway.NewTenant other = gateway.createTenant("someone-else");

  enum Who { TENANT, NOBODY, ADMIN }

  private String credential(Who who) {
    return switch (who) {
      case TENANT -> gateway.apiKey();
      case NOBODY -> null;
      case ADMIN -> TestGateway.ADMIN_TOKEN;
    };
  }

  /** Every route with a path and methods, its parameters filled with ids (random, so nothing is destroyed). */
  private List<String[]> routes() {
    List<String[]> routes = new ArrayList<>();
    for (Route route : gateway.gateway().routes()) {
      if (route.getPath() == null || route.methods() == null || route.methods().isEmpty()) {
        continue; // the handlers every request passes (request id, canonical path, failures)
      }
      String path = route.getPath().replaceAll(":[a-z_]+", UUID.randomUUID().toString());
      for (HttpMethod method : route.methods()) {
        routes.add(new String[] {method.name(), path});
      }
    }
    return routes;
  }

  private static boolean adminRoute(String path) {
    return path.startsWith("/v1/admin/") || path.equals("/v1/admin");
  }

  private static String bodyFor(String method) {
    return method.equals("POST") || method.equals("PUT") || method.equals("PATCH") ? "{}" : null;
  }

  @Test
  @DisplayName("the router has the routes this sweep is about: documents, search, executions, analyses, admin, probes")
  void routesAreEnumerated() {
    Set<String> paths = new TreeSet<>();
    gateway.gateway().routes().forEach(r -> {
      if (r.getPath() != null) {
        paths.add(r.getPath());
      }
    });
    assertThat(paths).contains("/v1/documents", "/v1/documents/:id/content", "/v1/search", "/v1/executions",
        "/v1/analyses", "/v1/analyses/:id/replay", "/v1/admin/tenants", "/v1/admin/tenants/:tenant/keys/:key",
        "/v1/admin/tenants/:tenant/quotas", "/healthz", "/readyz")
        .as("/metrics is served on a port of its own").doesNotContain("/metrics");
  }

  @Test
  @DisplayName("as written: admin routes take only the admin token, tenant routes only a tenant key, probes anyone")
  void canonicalPaths() {
    List<String> wrong = new ArrayList<>();
    for (String[] route : routes()) {
      for (Who who : Who.values()) {
        RawHttp.Answer a = RawHttp.send(gateway.port(), route[0], route[1], credential(who), bodyFor(route[0]));
        String where = who + " " + route[0] + " " + route[1] + " -> " + a;
        boolean refused = a.status() == 401 || a.status() == 403;
        if (a.status() >= 500 && !route[1].equals("/readyz")) {
          wrong.add(where + " (5xx)");
        } else if (OPEN.contains(route[1])) {
          if (refused) {
            wrong.add(where + " (a probe refused)");
          }
        } else if (adminRoute(route[1]) ? (who == Who.ADMIN) == refused : (who == Who.TENANT) == refused) {
          wrong.add(where + (refused ? " (refused the right principal)" : " (admitted the wrong principal)"));
        }
      }
    }
    assertThat(wrong).isEmpty();
    // And the one list an attacker wants most: the tenants, to the admin only.
    RawHttp.Answer tenants = RawHttp.send(gateway.port(), "GET", "/v1/admin/tenants", TestGateway.ADMIN_TOKEN, null);
    assertThat(tenants.status()).isEqualTo(200);
    assertThat(tenants.body()).contains("someone-else");
  }

  @Test
  @DisplayName("any other spelling (escapes, dot segments, doubled, trailing, escaped or back slashes) is 400 for everyone")
  void nonCanonicalSpellingsAreRefused() {
    Random random = new Random(Long.getLong("quarry.fuzz.seed", 0xA17L));
    List<String> wrong = new ArrayList<>();
    int sent = 0;
    for (String[] route : routes()) {
      for (PathSpellings.Spelling s : PathSpellings.of(route[1], random, RANDOM_MIXES)) {
        for (Who who : Who.values()) {
          RawHttp.Answer a = RawHttp.send(gateway.port(), route[0], s.path(), credential(who), bodyFor(route[0]));
          sent++;
          String where = who + " " + route[0] + " " + s.path() + " (" + s.how() + ") -> " + a;
          leaks(who, a, where, wrong);
          if (s.kind() == PathSpellings.Kind.NON_CANONICAL) {
            if (a.status() != 400) {
              wrong.add(where + " (expected 400)");
            }
          } else if (a.status() != 404 && a.status() != 405 && !OPEN.contains(route[1])) {
            // A case change reaches no route, or (an id's letters) the same one: then as written.
            boolean refused = a.status() == 401 || a.status() == 403;
            if (adminRoute(route[1].toLowerCase()) ? (who == Who.ADMIN) == refused : (who == Who.TENANT) == refused) {
              wrong.add(where + " (case change decided otherwise than the route)");
            }
          }
        }
      }
    }
    assertThat(wrong).isEmpty();
    assertThat(sent).as("requests sent").isGreaterThan(routes().size() * 3 * 40);
  }

  /** Whatever the status: no tenant list or key to a non-admin, no 2xx on a non-open route to nobody. */
  private void leaks(Who who, RawHttp.Answer a, String where, List<String> wrong) {
    if (who != Who.ADMIN && (a.body().contains("someone-else") || a.body().contains("\"api_key\""))) {
      wrong.add(where + " (admin data to " + who + ")");
    }
    if (who == Who.NOBODY && a.status() >= 200 && a.status() < 300 && !a.body().contains("\"status\"")
        && !a.head().contains("text/plain; version=0.0.4") && !ConsoleRoutes.FILES.containsKey(pathOf(where))) {
      wrong.add(where + " (2xx without a key)");
    }
  }

  private static String pathOf(String where) {
    return where.split(" ")[2];
  }

  @Test
  @DisplayName("the console's files are public and the same bytes for anyone: a key, none, the admin token")
  void consoleIsTheSameForAnyone() {
    assertThat(ConsoleRoutes.FILES).containsKey("/");
    for (String path : ConsoleRoutes.FILES.keySet()) {
      RawHttp.Answer nobody = RawHttp.send(gateway.port(), "GET", path, null, null);
      assertThat(nobody.status()).as(path).isEqualTo(200);
      for (Who who : List.of(Who.TENANT, Who.ADMIN)) {
        RawHttp.Answer a = RawHttp.send(gateway.port(), "GET", path, credential(who), null);
        assertThat(a.status()).as(who + " " + path).isEqualTo(200);
        assertThat(a.body()).as(who + " " + path).isEqualTo(nobody.body());
      }
      assertThat(nobody.body()).doesNotContain(gateway.apiKey()).doesNotContain(TestGateway.ADMIN_TOKEN);
    }
  }

  @Test
  @DisplayName("two Authorization headers are refused with 400 on tenant and admin routes, whichever comes first")
  void twoCredentials() {
    for (String path : List.of("/v1/admin/tenants", "/v1/documents")) {
      for (String[] pair : List.of(new String[] {gateway.apiKey(), TestGateway.ADMIN_TOKEN},
          new String[] {TestGateway.ADMIN_TOKEN, gateway.apiKey()})) {
        String head = "GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nAuthorization: Bearer "
            + pair[0] + "\r\nAuthorization: Bearer " + pair[1] + "\r\n\r\n";
        RawHttp.Answer a = RawHttp.send(gateway.port(), head.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1), new byte[0]);
        assertThat(a.status()).as(path + " " + a).isEqualTo(400);
        assertThat(a.body()).contains("ambiguous_credentials").doesNotContain("someone-else");
      }
    }
  }

  @Test
  @DisplayName("the finding's own paths: a tenant key never reaches the admin API, and the refusal names why")
  void reportedPaths() {
    for (String path : List.of("/v1/documents/../admin/tenants", "/v1/%61dmin/tenants", "//v1/admin/tenants",
        "/v1/./admin/tenants", "/v1/documents/%2e%2e/admin/tenants", "/v1/documents/..%2fadmin/tenants",
        "/v1/documents%2f..%2fadmin/tenants", "/v1/admin/tenants/", "/v1\\admin\\tenants")) {
      RawHttp.Answer get = RawHttp.send(gateway.port(), "GET", path, gateway.apiKey(), null);
      assertThat(get.status()).as(path + " " + get).isEqualTo(400);
      assertThat(get.body()).as(path).contains("non_canonical_path").doesNotContain("someone-else");
      RawHttp.Answer post = RawHttp.send(gateway.port(), "POST", path.replace("/tenants", "/tenants/" + other.id() + "/keys"),
          gateway.apiKey(), new JsonObject().put("name", "stolen").encode());
      assertThat(post.status()).as(path + " " + post).isEqualTo(400);
      assertThat(post.body()).doesNotContain("api_key");
    }
  }
}
