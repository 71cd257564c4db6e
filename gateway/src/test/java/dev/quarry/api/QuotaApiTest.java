package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.config.Quota;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("Quotas over HTTP: 429 with Retry-After and the quota's name, for the tenant over it only")
class QuotaApiTest {
  private static final long RPM = 5;
  private TestGateway gateway;

  @BeforeAll
  void start() throws Exception {
    gateway = TestGateway.start(c -> c.withTenancy(c.tenancy().withDefault(Quota.REQUESTS_PER_MINUTE, RPM)));
  }

  @AfterAll
  void stop() throws Exception {
    gateway.close();
  }

  private WebClient tenantWith(String name, JsonObject quotas) {
    TestGateway.NewTenant t = gateway.createTenant(name);
    HttpResponse<Buffer> set = gateway.admin().put("/v1/admin/tenants/" + t.id() + "/quotas")
        .sendJsonObject(quotas.put("requests_per_minute", 10_000)).await();
    assertThat(set.statusCode()).as(set.bodyAsString()).isEqualTo(200);
    return gateway.clientFor(t.apiKey());
  }

  private static HttpResponse<Buffer> ingest(WebClient client, String uri, int bytes) {
    String content = "# " + uri + "\n\n" + "w".repeat(Math.max(1, bytes - uri.length() - 4)) + "\n";
    return client.post("/v1/documents").sendJsonObject(new JsonObject().put("uri", uri)
        .put("content_type", "text/markdown").put("content", content)).await();
  }

  private static void assertOver(HttpResponse<Buffer> response, Quota quota) {
    assertThat(response.statusCode()).as(response.bodyAsString()).isEqualTo(429);
    assertThat(Long.parseLong(response.getHeader("Retry-After"))).isPositive();
    JsonObject error = response.bodyAsJsonObject().getJsonObject("error");
    assertThat(error.getString("code")).isEqualTo("quota_exceeded");
    assertThat(error.getString("message")).contains(quota.wireName());
  }

  @Test
  @DisplayName("past its requests per minute a tenant gets 429; another tenant is served as before")
  void requestsPerMinute() {
    TestGateway.NewTenant noisy = gateway.createTenant("noisy");
    TestGateway.NewTenant quiet = gateway.createTenant("quiet");
    WebClient n = gateway.clientFor(noisy.apiKey());
    for (int i = 0; i < RPM; i++) {
      assertThat(n.get("/v1/documents").send().await().statusCode()).isEqualTo(200);
    }
    assertOver(n.get("/v1/documents").send().await(), Quota.REQUESTS_PER_MINUTE);
    HttpResponse<Buffer> other = gateway.clientFor(quiet.apiKey()).get("/v1/documents").send().await();
    assertThat(other.statusCode()).isEqualTo(200);
  }

  @Test
  @DisplayName("a document that would take the tenant past its stored bytes is refused and nothing is stored; a replacement counts only its own size")
  void storedBytes() {
    WebClient c = tenantWith("storage", new JsonObject().put("stored_bytes", 1000));
    assertThat(ingest(c, "a.md", 600).statusCode()).isEqualTo(201);
    long documents = gateway.count("documents");
    assertOver(ingest(c, "b.md", 600), Quota.STORED_BYTES);
    assertThat(gateway.count("documents")).isEqualTo(documents);
    assertThat(c.get("/v1/documents").send().await().bodyAsJsonObject().getJsonArray("documents")).hasSize(1);
    HttpResponse<Buffer> replaced = ingest(c, "a.md", 900);
    assertThat(replaced.statusCode()).as(replaced.bodyAsString()).isEqualTo(201);
    assertThat(replaced.bodyAsJsonObject().getString("status")).isEqualTo("replaced");
  }

  @Test
  @DisplayName("a document's title and uri count in the tenant's stored bytes, as its content does")
  void titleAndUriAreStoredBytes() {
    WebClient c = tenantWith("long-names", new JsonObject().put("stored_bytes", 2000));
    String uri = "docs/" + "u".repeat(1000) + ".txt"; // 1009 bytes
    // 8 bytes of content, a 900-byte title and the uri: 1917 bytes
    assertThat(plain(c, uri, "T".repeat(900), "tiny one").statusCode()).isEqualTo(201);
    // 8 + 100 + 5 = 113 more would make 2030
    HttpResponse<Buffer> refused = plain(c, "b.txt", "B".repeat(100), "tiny two");
    assertOver(refused, Quota.STORED_BYTES);
    assertThat(refused.bodyAsJsonObject().getJsonObject("error").getString("message"))
        .contains("stores 1917 bytes", "this one (113 bytes with its title and uri)");
    // The first document replaced under a one-letter title: 23 + 1 + 1009 = 1033, and now 113 more fit.
    assertThat(plain(c, uri, "A", "tiny one, shorter title").statusCode()).isEqualTo(201);
    assertThat(plain(c, "b.txt", "B".repeat(100), "tiny two").statusCode()).isEqualTo(201);
  }

  private static HttpResponse<Buffer> plain(WebClient client, String uri, String title, String content) {
    return client.post("/v1/documents").sendJsonObject(new JsonObject().put("uri", uri).put("title", title)
        .put("content_type", "text/plain").put("content", content)).await();
  }

  @Test
  @DisplayName("a document larger than the tenant's document size is refused")
  void documentBytes() {
    WebClient c = tenantWith("small-docs", new JsonObject().put("document_bytes", 100));
    assertThat(ingest(c, "ok.md", 80).statusCode()).isEqualTo(201);
    assertOver(ingest(c, "big.md", 300), Quota.DOCUMENT_BYTES);
  }

  @Test
  @DisplayName("an admin's quota above the configured maximum is refused, naming the quota; GET shows the quotas in force")
  void overridesAreBounded() {
    TestGateway.NewTenant t = gateway.createTenant("bounded");
    HttpResponse<Buffer> tooMuch = gateway.admin().put("/v1/admin/tenants/" + t.id() + "/quotas")
        .sendJsonObject(new JsonObject().put("stored_bytes", Long.MAX_VALUE / 4)).await();
    assertThat(tooMuch.statusCode()).isEqualTo(400);
    assertThat(tooMuch.bodyAsString()).contains("stored_bytes");
    JsonObject shown = gateway.admin().get("/v1/admin/tenants/" + t.id()).send().await().bodyAsJsonObject();
    assertThat(shown.getJsonObject("quotas").getLong("requests_per_minute")).isEqualTo(RPM);
    assertThat(shown.getJsonObject("quotas").getLong("stored_bytes")).isEqualTo(Quota.STORED_BYTES.builtInDefault());
  }
}
