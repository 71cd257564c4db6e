package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.config.Quota;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * The authentication boundary as properties (jqwik): random spellings of the routes' paths, each
 * made of up to five random edits (a percent-escape of any character of the path, in either case
 * of hex, doubly escaped or as UTF-8; a dot segment, plain or escaped, anywhere; doubled, trailing
 * or back slashes; a letter's case; a `;` parameter, a NUL, a non-ASCII character), sent over raw
 * sockets with a tenant's key and with none. Whatever the spelling:
 * <ul>
 *   <li>a tenant's key never gets admin data (another tenant's name, an API key), nor a 2xx from
 *       any spelling of an admin path;
 *   <li>no key never gets tenant data (the default tenant's canary document), nor a 2xx but from a probe;
 *   <li>a spelling that differs from the path by more than case is 400, for everyone; none is a 5xx.
 * </ul>
 * {@link AuthenticationBoundaryTest} sweeps the router's every route with fixed spellings; this
 * draws new ones on every run (a failure is shrunk and kept in target/jqwik-database).
 */
@Label("Authentication holds for generated spellings of every kind of path")
class AuthenticationPropertiesTest {
  private static final String OTHER = "someone-else-prop";
  private static final String CANARY = "CANARY-DEFAULT-TENANT-7c1e";
  private static final List<String> ADMIN_PATHS = List.of("/v1/admin/tenants", "/v1/admin/tenants/%s",
      "/v1/admin/tenants/%s/keys", "/v1/admin/tenants/%s/quotas");
  private static final List<String> TENANT_PATHS = List.of("/v1/documents", "/v1/documents/%s",
      "/v1/documents/%s/content", "/v1/search", "/v1/analyses", "/v1/executions", "/v1/models", "/mcp");
  private static TestGateway gateway;
  private static String otherId;
  private static String documentId;

  @BeforeContainer
  static void start() {
    gateway = TestGateway.started(config -> config.withTenancy(
        config.tenancy().withDefault(Quota.REQUESTS_PER_MINUTE, 1_000_000)));
    otherId = gateway.createTenant(OTHER).id().toString();
    var created = gateway.client().post("/v1/documents").sendJsonObject(new JsonObject().put("title", CANARY)
        .put("uri", "notes://canary").put("content", "# " + CANARY + "\n\nThe canary line.\n")
        .put("content_type", "text/markdown")).await();
    assertThat(created.statusCode()).as(created.bodyAsString()).isEqualTo(201);
    documentId = created.bodyAsJsonObject().getString("id");
  }

  @AfterContainer
  static void stop() throws Exception {
    if (gateway != null) {
      gateway.close();
    }
  }

  /** A path as written and a spelling of it, with the edits that made it. */
  record Spelled(String path, String spelling, List<String> edits) {
    boolean onlyCase() {
      return !spelling.equals(path) && spelling.equalsIgnoreCase(path);
    }
  }

  @Provide
  Arbitrary<Spelled> adminSpellings() {
    return spellings(ADMIN_PATHS, () -> otherId);
  }

  @Provide
  Arbitrary<Spelled> tenantSpellings() {
    return spellings(TENANT_PATHS, () -> documentId);
  }

  @Provide
  Arbitrary<String> methods() {
    return Arbitraries.of("GET", "POST", "PUT", "DELETE");
  }

  @Property(tries = 400)
  @Label("a tenant's key: no admin data, no 2xx, from any spelling of an admin path")
  void tenantKeyNeverReachesAdmin(@ForAll("adminSpellings") Spelled s, @ForAll("methods") String method) {
    RawHttp.Answer a = send(method, s, gateway.apiKey());
    assertThat(a.body()).as(describe(method, s, a)).doesNotContain(OTHER).doesNotContain("\"api_key\"");
    assertThat(a.status()).as(describe(method, s, a)).isLessThan(500).matches(st -> st / 100 != 2, "not a 2xx");
    expectCanonicalForm(method, s, a);
  }

  @Property(tries = 400)
  @Label("no key: no tenant data, no 2xx, from any spelling of a tenant or admin path")
  void noKeyNeverReachesTenantData(@ForAll("tenantSpellings") Spelled tenant, @ForAll("adminSpellings") Spelled admin,
      @ForAll("methods") String method) {
    for (Spelled s : List.of(tenant, admin)) {
      RawHttp.Answer a = send(method, s, null);
      assertThat(a.body()).as(describe(method, s, a)).doesNotContain(CANARY).doesNotContain(OTHER)
          .doesNotContain("\"api_key\"");
      assertThat(a.status()).as(describe(method, s, a)).isLessThan(500).matches(st -> st / 100 != 2, "not a 2xx");
      expectCanonicalForm(method, s, a);
    }
  }

  @Property(tries = 300)
  @Label("a tenant's key on tenant paths: never another tenant's data, and any non-canonical spelling is 400")
  void tenantKeyOnTenantPaths(@ForAll("tenantSpellings") Spelled s) {
    RawHttp.Answer a = send("GET", s, gateway.apiKey());
    assertThat(a.body()).as(describe("GET", s, a)).doesNotContain(OTHER).doesNotContain("\"api_key\"");
    assertThat(a.status()).as(describe("GET", s, a)).isLessThan(500);
    expectCanonicalForm("GET", s, a);
  }

  private static void expectCanonicalForm(String method, Spelled s, RawHttp.Answer a) {
    if (!s.spelling().equals(s.path()) && !s.onlyCase()) {
      assertThat(a.status()).as("not canonical: " + describe(method, s, a)).isEqualTo(400);
    }
  }

  /** Raw, the request line in UTF-8 (a non-ASCII character goes out as its bytes, as a client may send it). */
  private static RawHttp.Answer send(String method, Spelled s, String bearer) {
    byte[] body = method.equals("POST") || method.equals("PUT")
        ? "{\"name\": \"stolen\"}".getBytes(StandardCharsets.UTF_8) : new byte[0];
    String head = method + " " + s.spelling() + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
        + (bearer == null ? "" : "Authorization: Bearer " + bearer + "\r\n")
        + (body.length > 0 ? "Content-Type: application/json\r\n" : "")
        + "Content-Length: " + body.length + "\r\n\r\n";
    return RawHttp.send(gateway.port(), head.getBytes(StandardCharsets.UTF_8), body);
  }

  private static String describe(String method, Spelled s, RawHttp.Answer a) {
    return method + " " + s.spelling() + " (from " + s.path() + " by " + s.edits() + ") -> " + a;
  }

  // --- the generator ---

  private static Arbitrary<Spelled> spellings(List<String> templates, java.util.function.Supplier<String> id) {
    Arbitrary<String> path = Arbitraries.of(templates).map(t -> t.contains("%s") ? String.format(t, id.get()) : t);
    Arbitrary<List<Edit>> edits = edit().list().ofMinSize(0).ofMaxSize(5);
    return Combinators.combine(path, edits).as(AuthenticationPropertiesTest::apply);
  }

  /** One edit: what it does and where (a fraction of the path's length, so it fits any path). */
  record Edit(String kind, double at, int variant) {}

  private static Arbitrary<Edit> edit() {
    return Combinators.combine(
        Arbitraries.of("escape", "escape_twice", "dot", "dotdot", "escaped_dot", "double_slash", "trailing_slash",
            "backslash", "escaped_slash", "case", "param", "nul", "non_ascii", "utf8_escape", "leading_slash"),
        Arbitraries.doubles().between(0, 1), Arbitraries.integers().between(0, 7)).as(Edit::new);
  }

  private static Spelled apply(String path, List<Edit> edits) {
    String s = path;
    List<String> done = new ArrayList<>();
    for (Edit e : edits) {
      int i = Math.min(s.length() - 1, (int) (e.at() * s.length()));
      int slash = Math.max(0, s.lastIndexOf('/', i));
      char c = s.charAt(i);
      String hex = String.format(e.variant() % 2 == 0 ? "%%%02x" : "%%%02X", (int) c & 0xff);
      s = switch (e.kind()) {
        case "escape" -> c < 0x80 ? s.substring(0, i) + hex + s.substring(i + 1) : s;
        case "escape_twice" -> c < 0x80 ? s.substring(0, i) + "%25" + hex.substring(1) + s.substring(i + 1) : s;
        case "dot" -> s.substring(0, slash) + "/." + s.substring(slash);
        case "dotdot" -> s.substring(0, slash) + "/x/.." + s.substring(slash);
        case "escaped_dot" -> s.substring(0, slash) + List.of("/%2e", "/%2E%2e", "/.%2e", "/x/%2e%2e").get(e.variant() % 4)
            + s.substring(slash);
        case "double_slash" -> s.substring(0, slash) + "/" + s.substring(slash);
        case "trailing_slash" -> s + "/";
        case "leading_slash" -> "/" + s;
        case "backslash" -> s.substring(0, slash) + "\\" + s.substring(slash + 1);
        case "escaped_slash" -> s.substring(0, slash) + List.of("%2f", "%2F", "%5c", "%5C").get(e.variant() % 4)
            + s.substring(slash + 1);
        case "case" -> s.substring(0, i) + flipCase(c) + s.substring(i + 1);
        case "param" -> s.substring(0, i) + ";x=" + e.variant() + s.substring(i);
        case "nul" -> s.substring(0, i) + "%00" + s.substring(i);
        case "non_ascii" -> s.substring(0, i) + List.of("\u00e9", "\u0131", "\u212a", "\u017f", "\uff0f", "\u2024",
            "\u200b", "\uff41").get(e.variant()) + s.substring(i);
        case "utf8_escape" -> s.substring(0, i) + utf8Escape(List.of("\u0131", "\u017f", "\u212a", "\uff0f", "\uff0e").get(e.variant() % 5))
            + s.substring(i);
        default -> throw new IllegalStateException(e.kind());
      };
      done.add(e.kind() + "@" + i);
    }
    return new Spelled(path, s, done);
  }

  private static String flipCase(char c) {
    String one = String.valueOf(c);
    if (c >= 0x80) {
      // Not a non-ASCII letter: 'ı' (inserted by non_ascii) upper-cases to an ASCII 'I', which would turn
      // a spelling the gateway must refuse back into a canonical path (to a route that does not exist).
      return one;
    }
    return Character.isUpperCase(c) ? one.toLowerCase(Locale.ROOT) : one.toUpperCase(Locale.ROOT);
  }

  private static String utf8Escape(String s) {
    StringBuilder out = new StringBuilder();
    for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
      out.append(String.format("%%%02X", b & 0xff));
    }
    return out.toString();
  }
}
